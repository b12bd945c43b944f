package io.lastunit.admin.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonElement;
import com.google.gson.JsonParser;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import io.grpc.CallOptions;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.stub.ClientCalls;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.testkit.PostgresFixture;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The first session of docs/local-platform.md, run as written: every {@code call Method 'json'}
 * of the block between {@code session:begin} and {@code session:end} is sent to the router of a
 * platform like {@code ./lastunit up}'s (one region, "local"), with the request parsed from the
 * doc's JSON exactly as grpcurl parses it (protobuf's JSON mapping), the shell variables taken
 * from earlier answers by their {@code jq -r} paths. So a renamed field, a missing required
 * field or a call that no longer works as the page says fails this test. The answers the page
 * promises are checked at the end.
 */
class FirstSessionDocIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final Path DOC = Path.of("..", "docs", "local-platform.md");
    private static final Pattern CALL = Pattern.compile("^(?:(\\w+)=\\$\\()?call (\\w+) ('([^']*)'|\"((?:[^\"\\\\]|\\\\.)*)\")"
            + "(?: \\| jq -r (\\S+)\\))?$");

    /** One call of the session: the method, the JSON as the shell passes it, and where its answer goes. */
    record Call(String method, String json, String variable, String jqPath) {
    }

    static List<Call> session() throws Exception {
        String doc = Files.readString(DOC);
        int begin = doc.indexOf("<!-- session:begin");
        int end = doc.indexOf("<!-- session:end -->");
        assertThat(begin).as("the session's markers in %s", DOC).isNotNegative();
        assertThat(end).isGreaterThan(begin);
        List<Call> calls = new ArrayList<>();
        boolean definesCall = false;
        for (String line : doc.substring(begin, end).split("\n")) {
            line = line.strip();
            if (line.isEmpty() || line.startsWith("#") || line.startsWith("```") || line.startsWith("<!--")) {
                continue;
            }
            if (line.startsWith("export TOKEN=")) {
                assertThat(line).isEqualTo("export TOKEN=" + LocalPlatform.DEV_TOKEN);
                continue;
            }
            if (line.startsWith("call() {")) {
                assertThat(line).contains("grpcurl -plaintext", "-H \"authorization: Bearer $TOKEN\"", "-d \"$2\"",
                        "127.0.0.1:7400", "\"lastunit.inventory.v1.InventoryService/$1\"");
                definesCall = true;
                continue;
            }
            Matcher m = CALL.matcher(line);
            assertThat(m.matches()).as("a session line the test understands: %s", line).isTrue();
            String json = m.group(4) != null ? m.group(4) : m.group(5).replace("\\\"", "\"");
            calls.add(new Call(m.group(2), json, m.group(1), m.group(6)));
        }
        assertThat(definesCall).as("the session defines call()").isTrue();
        return calls;
    }

    @Test
    void everyCallOfTheFirstSession_worksAsThePageSays() throws Exception {
        List<Call> calls = session();
        assertThat(calls).extracting(Call::method).containsExactly("CreateItem", "Reserve", "Reserve", "GetHold",
                "Extend", "Confirm", "Reserve", "Release", "GetStock");
        Map<String, MethodDescriptor<?, ?>> methods = new HashMap<>();
        for (MethodDescriptor<?, ?> md : InventoryServiceGrpc.getServiceDescriptor().getMethods()) {
            methods.put(md.getBareMethodName(), md);
        }
        try (ClusterClients clients = new ClusterClients(PG);
             LocalPlatform platform = LocalPlatform.builder(clients.databases()).cell("shared", List.of("local"), 2)
                     .balancers(0).start()) {
            ManagedChannel router = clients.routerChannel(platform);
            var channel = ClientInterceptors.intercept(router, ClusterClients.bearer(LocalPlatform.DEV_TOKEN));
            Map<String, String> shell = new HashMap<>();
            List<JsonElement> answers = new ArrayList<>();
            for (Call c : calls) {
                MethodDescriptor<?, ?> md = methods.get(c.method());
                assertThat(md).as("InventoryService has %s", c.method()).isNotNull();
                String json = c.json();
                for (var v : shell.entrySet()) {
                    json = json.replace("$" + v.getKey(), v.getValue());
                }
                assertThat(json).as("every variable is set before use").doesNotContain("$");
                Message answer = call(channel, md, json);
                JsonElement printed = JsonParser.parseString(JsonFormat.printer().print(answer));
                answers.add(printed);
                if (c.variable() != null) {
                    shell.put(c.variable(), jq(printed, c.jqPath()));
                }
            }
            JsonElement create = answers.get(0);
            assertThat(create.getAsJsonObject().get("created").getAsBoolean()).isTrue();
            String hold = answers.get(1).getAsJsonObject().getAsJsonObject("hold").get("holdId").getAsString();
            assertThat(jq(answers.get(1), ".outcome")).isEqualTo("RESERVED");
            assertThat(jq(answers.get(1), ".hold.region")).as("the region filled in").isEqualTo("local");
            assertThat(shell.get("HOLD")).as("the retry answers the same hold").isEqualTo(hold);
            assertThat(jq(answers.get(3), ".hold.state")).isEqualTo("HELD");
            assertThat(jq(answers.get(4), ".hold.extended")).isEqualTo("true");
            assertThat(jq(answers.get(5), ".hold.state")).isEqualTo("SOLD");
            assertThat(jq(answers.get(5), ".hold.orderRef")).isEqualTo("order-1001");
            assertThat(jq(answers.get(7), ".hold.state")).isEqualTo("RELEASED");
            assertThat(jq(answers.get(8), ".stock.total")).isEqualTo("10");
            assertThat(jq(answers.get(8), ".stock.available")).isEqualTo("8");
            assertThat(jq(answers.get(8), ".stock.sold")).isEqualTo("2");
            assertThat(answers.get(8).getAsJsonObject().getAsJsonObject("stock").has("held"))
                    .as("zero is left out of the JSON, as the page says").isFalse();
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static Message call(io.grpc.Channel channel, MethodDescriptor md, String json) throws Exception {
        Message prototype = (Message) ((MethodDescriptor.PrototypeMarshaller) md.getRequestMarshaller())
                .getMessagePrototype();
        Message.Builder request = prototype.newBuilderForType();
        JsonFormat.parser().merge(json, request);
        return (Message) ClientCalls.blockingUnaryCall(channel, md,
                CallOptions.DEFAULT.withDeadlineAfter(ClusterClients.callDeadlineMillis(), TimeUnit.MILLISECONDS), request.build());
    }

    /** {@code jq -r PATH} for the paths the page uses: {@code .a.b}. */
    private static String jq(JsonElement e, String path) {
        JsonElement at = e;
        for (String part : path.substring(1).split("\\.")) {
            at = at.getAsJsonObject().get(part);
            assertThat(at).as("%s in %s", path, e).isNotNull();
        }
        return at.getAsString();
    }
}
