package io.lastunit.common;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.OutputStreamAppender;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.ByteArrayOutputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;

/**
 * The services' logging configuration (logback.xml and lastunit-logback-base.xml in common): a
 * date and zone in every timestamp, tenant/item/hold key-value pairs after the message, and JSON
 * lines when LASTUNIT_LOG_FORMAT=json.
 */
class LoggingConfigTest {
    /**
     * What {@code logging} wrote through the services' configuration with {@code format} (null: the
     * default): the root's one appender, its encoder as configured, writing into a buffer.
     */
    private static String logged(String format, Consumer<LoggerContext> logging) throws Exception {
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        LoggerContext context = new LoggerContext();
        context.setMDCAdapter(new ch.qos.logback.classic.util.LogbackMDCAdapter()); // a context of our own needs one
        try {
            if (format != null) {
                context.putProperty("LASTUNIT_LOG_FORMAT", format);
            }
            JoranConfigurator configurator = new JoranConfigurator();
            configurator.setContext(context);
            URL config = LoggingConfigTest.class.getClassLoader().getResource("logback.xml");
            assertThat(config).as("common's logback.xml on the classpath").isNotNull();
            configurator.doConfigure(config);
            Iterator<Appender<ILoggingEvent>> appenders = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)
                    .iteratorForAppenders();
            Appender<ILoggingEvent> appender = appenders.next();
            assertThat(appenders.hasNext()).as("one appender on the root").isFalse();
            assertThat(appender.getName()).isEqualTo("out");
            assertThat(appender instanceof OutputStreamAppender<ILoggingEvent> o && o.getEncoder()
                    instanceof ch.qos.logback.classic.encoder.JsonEncoder).isEqualTo("json".equals(format));
            ((OutputStreamAppender<ILoggingEvent>) appender).setOutputStream(captured);
            logging.accept(context);
        } finally {
            context.stop();
        }
        return captured.toString(StandardCharsets.UTF_8);
    }

    private static void collapseFailed(LoggerContext context) {
        Logger log = context.getLogger("io.lastunit.shard.escrow.Collapser");
        log.atWarn().addKeyValue("tenant", "acme").addKeyValue("item", "hot")
                .log("lane {}: collapse into bucket 0 failed", 3);
        log.debug("not at INFO");
    }

    @Test
    void text_hasAnIsoTimestampWithZone_andTheKeyValuesAfterTheMessage() throws Exception {
        String out = logged(null, LoggingConfigTest::collapseFailed);
        assertThat(out.lines()).singleElement().asString()
                .matches("\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z WARN  \\[[^]]+] i\\.l\\.s\\.e\\.Collapser"
                        + " - lane 3: collapse into bucket 0 failed tenant=\"acme\" item=\"hot\"");
    }

    @Test
    void text_withoutKeyValues_endsAtTheMessage() throws Exception {
        String out = logged(null, c -> c.getLogger("io.lastunit.x").info("plain"));
        assertThat(out).endsWith(" - plain" + System.lineSeparator());
    }

    @Test
    void json_isOneObjectPerLine_withLevelLoggerMessageAndKeyValues() throws Exception {
        String out = logged("json", LoggingConfigTest::collapseFailed);
        assertThat(out.lines().filter(l -> l.contains("\"level\""))).hasSize(1);
        JsonObject line = JsonParser.parseString(out.lines().filter(l -> l.contains("\"level\"")).findFirst()
                .orElseThrow()).getAsJsonObject();
        assertThat(line.get("level").getAsString()).isEqualTo("WARN");
        assertThat(line.get("loggerName").getAsString()).isEqualTo("io.lastunit.shard.escrow.Collapser");
        assertThat(line.get("formattedMessage").getAsString()).isEqualTo("lane 3: collapse into bucket 0 failed");
        assertThat(line.get("timestamp").getAsLong()).isPositive();
        assertThat(line.get("kvpList").toString()).contains("\"tenant\":\"acme\"").contains("\"item\":\"hot\"");
    }
}
