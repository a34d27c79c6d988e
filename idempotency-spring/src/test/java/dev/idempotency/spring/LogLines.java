package dev.idempotency.spring;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import org.slf4j.LoggerFactory;

/** The lines logged under {@code dev.idempotency} while it is open, as {@code LEVEL message}. */
public final class LogLines implements AutoCloseable {

    private final Logger logger = (Logger) LoggerFactory.getLogger("dev.idempotency");
    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

    private LogLines() {
        appender.start();
        logger.addAppender(appender);
    }

    public static LogLines open() {
        return new LogLines();
    }

    /** Every line so far. */
    public List<String> lines() {
        return appender.list.stream().map(e -> e.getLevel() + " " + e.getFormattedMessage()).toList();
    }

    /** The lines so far that contain {@code text}. */
    public List<String> containing(String text) {
        return lines().stream().filter(l -> l.contains(text)).toList();
    }

    @Override
    public void close() {
        logger.detachAppender(appender);
        appender.stop();
    }
}
