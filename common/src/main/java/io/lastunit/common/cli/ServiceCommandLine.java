package io.lastunit.common.cli;

import java.io.PrintStream;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The command line of a service's main (shard node, router, bucket-balancer). A service takes its
 * settings from configuration, never from arguments, so the only arguments are {@code -h} and
 * {@code --help}: they print what the service is and every setting it reads (the fields of its
 * {@code @ConfigurationProperties} class, as keys and environment variables) and exit 0 without
 * starting anything. Any other argument is refused with one {@code error:} line (exit 2).
 *
 * <p>It also turns a failed start into one {@code error:} line: a bad setting exits 2, anything
 * else exits 1. A bad setting is an {@link IllegalArgumentException} anywhere in the cause chain
 * (the config classes throw it), or a value Micronaut could not convert (its
 * {@value #MICRONAUT_INJECTION_FAILURE}, matched by name: common does not depend on Micronaut).
 * The stack trace follows only with {@code LASTUNIT_LOG_LEVEL=DEBUG}.
 *
 * <p>Immutable and thread-safe; no I/O beyond the streams it is given.
 */
public final class ServiceCommandLine {
    public static final int OK = 0;
    public static final int FAILED = 1;
    public static final int USAGE = 2;
    /** What {@link #parse} returns when the service should start. */
    public static final int START = -1;
    static final String MICRONAUT_INJECTION_FAILURE = "io.micronaut.context.exceptions.DependencyInjectionException";
    /** Paragraphs of the help are wrapped at this many characters. */
    static final int WIDTH = 96;

    private final String command;
    private final List<String> description;
    private final String prefix;
    private final Class<?> properties;
    private final String docs;

    /**
     * @param command     how it is run, e.g. {@code lastunit router}
     * @param description paragraphs saying what it is and what it needs
     * @param prefix      the key prefix of its settings, e.g. {@code lastunit.router}
     * @param properties  the class the settings bind to (one field per key)
     * @param docs        where the settings' defaults, bounds and meaning are written
     */
    public ServiceCommandLine(String command, List<String> description, String prefix, Class<?> properties,
                              String docs) {
        this.command = command;
        this.description = List.copyOf(description);
        this.prefix = prefix;
        this.properties = properties;
        this.docs = docs;
    }

    /**
     * Handles the arguments: {@link #START} when there are none; else prints the help (exit code
     * {@link #OK}) or an error ({@link #USAGE}) and returns that code.
     */
    public int parse(List<String> args, PrintStream out, PrintStream err) {
        if (args.isEmpty()) {
            return START;
        }
        if (args.contains("-h") || args.contains("--help")) {
            out.print(usage());
            out.flush();
            return OK;
        }
        err.println("error: '" + command + "' takes no argument but -h/--help; got " + args + ". Settings are keys under "
                + prefix + " (environment " + envPrefix() + "*): see '" + command + " --help'.");
        err.flush();
        return USAGE;
    }

    /** What a service's start returned: what stops it (its context, closed in reverse order) and the line to print. */
    public record Started(AutoCloseable stop, String banner) {
    }

    /** Starts a service; it closes what it opened itself if it throws. */
    @FunctionalInterface
    public interface Start {
        Started start() throws Exception;
    }

    /**
     * A service's whole main: handles the arguments ({@link #parse}); starts the service; on a
     * failed start prints one line ({@link #startFailed}); else prints its banner, stops it from a
     * JVM shutdown hook (Ctrl-C, SIGTERM) and waits for that. Returns the exit code.
     */
    public int run(List<String> args, PrintStream out, PrintStream err, Start start) throws InterruptedException {
        int early = parse(args, out, err);
        if (early != START) {
            return early;
        }
        Started started;
        try {
            started = start.start();
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return startFailed(e, err);
        }
        java.util.concurrent.CountDownLatch stopped = new java.util.concurrent.CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                started.stop().close();
            } catch (Exception e) {
                err.println("error: '" + command + "' did not stop cleanly: " + e);
            } finally {
                stopped.countDown();
            }
        }, "shutdown"));
        out.println(started.banner() + " (Ctrl-C stops it)");
        out.flush();
        stopped.await();
        return OK;
    }

    /** The help text. */
    public String usage() {
        StringBuilder b = new StringBuilder();
        b.append("Usage: ").append(command).append(" [-h]\n\n");
        for (String paragraph : description) {
            b.append(wrap(paragraph)).append("\n\n");
        }
        b.append(wrap("It takes no other arguments. Every setting is a key under " + prefix
                + ", given as a Java system property (LASTUNIT_JAVA_OPTS=-D" + prefix + ".port=...), an environment"
                + " variable (" + envName("port") + "=...) or in a YAML file named by MICRONAUT_CONFIG_FILES."
                + " Defaults, bounds and meaning: " + docs + ".")).append("\n\n");
        List<String> keys = keys(properties);
        int width = Math.max("key".length(), keys.stream().mapToInt(String::length).max().orElse(0)) + 2;
        b.append("Settings (").append(prefix).append(".<key>):\n");
        b.append("  ").append(pad("key", width)).append("environment variable\n");
        for (String k : keys) {
            b.append("  ").append(pad(k, width)).append(envName(k)).append('\n');
        }
        b.append("\nOptions:\n  -h, --help   Print this help and exit.\n\n");
        b.append(wrap("Exit codes: 0 after --help; 1 the start failed; 2 a bad setting or argument; 130 (Ctrl-C) or"
                + " 143 (SIGTERM) when stopped by that signal, after a clean stop.")).append('\n');
        return b.toString();
    }

    /** {@code text} broken at spaces into lines of at most {@link #WIDTH} characters (longer words stay whole). */
    static String wrap(String text) {
        StringBuilder out = new StringBuilder();
        int lineLength = 0;
        for (String word : text.split(" ")) {
            if (lineLength > 0 && lineLength + 1 + word.length() > WIDTH) {
                out.append('\n');
                lineLength = 0;
            } else if (lineLength > 0) {
                out.append(' ');
                lineLength++;
            }
            out.append(word);
            lineLength += word.length();
        }
        return out.toString();
    }

    /**
     * Prints one {@code error:} line for a start that failed with {@code e} and returns the exit
     * code: {@link #USAGE} for a bad setting, {@link #FAILED} otherwise.
     */
    public int startFailed(Throwable e, PrintStream err) {
        IllegalArgumentException badSetting = find(e, IllegalArgumentException.class);
        Throwable unconverted = findByName(e, MICRONAUT_INJECTION_FAILURE);
        boolean bad = badSetting != null || unconverted != null;
        if (badSetting != null) {
            err.println("error: " + firstLine(badSetting.getMessage()));
        } else if (unconverted != null) {
            err.println("error: " + deepestMessage(unconverted.getMessage()));
        } else {
            Throwable root = e;
            while (root.getCause() != null && root.getCause() != root) {
                root = root.getCause();
            }
            err.println("error: '" + command + "' did not start: " + root.getClass().getSimpleName() + ": "
                    + firstLine(root.getMessage()));
        }
        String level = System.getenv("LASTUNIT_LOG_LEVEL");
        if (level != null && (level.equalsIgnoreCase("DEBUG") || level.equalsIgnoreCase("TRACE"))) {
            e.printStackTrace(err);
        }
        err.flush();
        return bad ? USAGE : FAILED;
    }

    /**
     * Micronaut nests the cause in the text: "Message: ..." lines, the last one the innermost
     * ("Error resolving property value [lastunit.shard.port]. Unable to convert value [abc] ...").
     */
    static String deepestMessage(String micronautMessage) {
        String deepest = firstLine(micronautMessage);
        for (String line : micronautMessage == null ? List.<String>of() : micronautMessage.lines().toList()) {
            if (line.startsWith("Message: ")) {
                deepest = line.substring("Message: ".length()).strip();
            }
        }
        return deepest;
    }

    private static Throwable findByName(Throwable e, String className) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t.getClass().getName().equals(className)) {
                return t;
            }
        }
        return null;
    }

    /** The setting keys of a properties class: its instance fields that have a setter, in kebab case. */
    static List<String> keys(Class<?> properties) {
        List<String> keys = new ArrayList<>();
        for (Field f : properties.getDeclaredFields()) {
            if (!Modifier.isStatic(f.getModifiers()) && hasSetter(properties, f)) {
                keys.add(kebab(f.getName()));
            }
        }
        return keys;
    }

    private static boolean hasSetter(Class<?> c, Field f) {
        String name = "set" + Character.toUpperCase(f.getName().charAt(0)) + f.getName().substring(1);
        for (Method m : c.getMethods()) {
            if (m.getName().equals(name) && m.getParameterCount() == 1) {
                return true;
            }
        }
        return false;
    }

    static String kebab(String camel) {
        return camel.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT);
    }

    /** The environment variable of a key: upper case, '.' and '-' become '_'. */
    String envName(String key) {
        return envPrefix() + key.replace('-', '_').toUpperCase(Locale.ROOT);
    }

    private String envPrefix() {
        return prefix.replace('.', '_').replace('-', '_').toUpperCase(Locale.ROOT) + "_";
    }

    private static String pad(String s, int width) {
        return s + " ".repeat(Math.max(1, width - s.length()));
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "(no message)";
        }
        int nl = s.indexOf('\n');
        return (nl < 0 ? s : s.substring(0, nl)).strip();
    }

    private static <T extends Throwable> T find(Throwable e, Class<T> type) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
        }
        return null;
    }
}
