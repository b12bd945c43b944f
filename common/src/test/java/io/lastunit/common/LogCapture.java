package io.lastunit.common;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import org.slf4j.LoggerFactory;

/** What one logger logs while it is open (logback's ListAppender). For one test thread at a time. */
final class LogCapture implements AutoCloseable {
    private final Logger logger;
    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

    LogCapture(Class<?> owner) {
        logger = (Logger) LoggerFactory.getLogger(owner);
        appender.start();
        logger.addAppender(appender);
    }

    List<ILoggingEvent> events() {
        synchronized (appender) { // AppenderBase.doAppend holds this lock
            return List.copyOf(appender.list);
        }
    }

    @Override
    public void close() {
        logger.detachAppender(appender);
        appender.stop();
    }
}
