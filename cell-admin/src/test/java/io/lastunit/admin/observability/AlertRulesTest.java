package io.lastunit.admin.observability;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The shipped alert rules (observability/prometheus/lastunit-rules.yml) are valid and behave as
 * their unit tests say, by Prometheus's own promtool ({@code .ci/run} installs it).
 */
public class AlertRulesTest {
    public static final Path DIR = Path.of("..", "observability", "prometheus");

    /** Runs promtool with {@code args} in the rules' directory; its output, after checking it exited 0. */
    static String promtool(String... args) throws IOException, InterruptedException {
        return promtoolIn(DIR, args);
    }

    /** The same in {@code dir}. */
    static String promtoolIn(Path dir, String... args) throws IOException, InterruptedException {
        List<String> command = new java.util.ArrayList<>(List.of("promtool"));
        command.addAll(List.of(args));
        Process p;
        try {
            p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new AssertionError("promtool is not installed (Debian: apt-get install prometheus; .ci/run does it)", e);
        }
        boolean done = p.waitFor(120, TimeUnit.SECONDS);
        if (!done) {
            p.destroyForcibly();
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(done).as("promtool ended within 2 minutes: %s", out).isTrue();
        assertThat(p.exitValue()).as("promtool %s:%n%s", String.join(" ", args), out).isZero();
        return out;
    }

    @Test
    void rulesAreValid() throws Exception {
        assertThat(Files.isRegularFile(DIR.resolve("lastunit-rules.yml"))).isTrue();
        assertThat(promtool("check", "rules", "lastunit-rules.yml")).contains("SUCCESS");
    }

    @Test
    void everyAlertFiresWhenItMust_andStaysQuietOtherwise() throws Exception {
        assertThat(promtool("test", "rules", "lastunit-rules.test.yml")).contains("SUCCESS");
    }

    @Test
    void everyAlertIsTested_andLinksARunbookSection() throws Exception {
        String rules = Files.readString(DIR.resolve("lastunit-rules.yml"));
        String tests = Files.readString(DIR.resolve("lastunit-rules.test.yml"));
        String doc = Files.readString(Path.of("..", "docs", "observability.md"));
        java.util.regex.Matcher alert = java.util.regex.Pattern.compile("- alert: (\\w+)").matcher(rules);
        int alerts = 0;
        while (alert.find()) {
            alerts++;
            assertThat(tests).as("a promtool test case for %s", alert.group(1)).contains("alertname: " + alert.group(1));
        }
        assertThat(alerts).isGreaterThanOrEqualTo(12);
        java.util.Set<String> anchors = new java.util.HashSet<>();
        for (String line : doc.lines().toList()) {
            if (line.startsWith("#")) {
                anchors.add(line.replaceFirst("^#+\\s*", "").toLowerCase(java.util.Locale.ROOT)
                        .replaceAll("[^a-z0-9 -]", "").trim().replace(' ', '-'));
            }
        }
        java.util.regex.Matcher runbook = java.util.regex.Pattern.compile("runbook: \"docs/observability.md#([a-z0-9-]+)\"")
                .matcher(rules);
        int runbooks = 0;
        while (runbook.find()) {
            runbooks++;
            assertThat(anchors).as("docs/observability.md has a section #%s", runbook.group(1)).contains(runbook.group(1));
        }
        assertThat(runbooks).as("every alert links its runbook").isEqualTo(alerts);
    }
}
