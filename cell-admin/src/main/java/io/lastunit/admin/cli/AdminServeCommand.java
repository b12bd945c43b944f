package io.lastunit.admin.cli;

import io.lastunit.admin.move.MoverSettings;
import io.lastunit.admin.move.plan.MovePolicy;
import io.lastunit.admin.server.AdminServer;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code lastunit admin serve --port PORT --token-grant GRANT ...}: the admin server
 * ({@code lastunit.admin.v1.AdminService}: start, show, list and abort tenant moves; every call needs
 * a token with the admin role) against the platform's ZooKeeper, until Ctrl-C. It runs the moves
 * started through it, and resumes every unfinished move no mover holds.
 */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = {"Run the admin server (lastunit.admin.v1.AdminService: tenant moves) until Ctrl-C.",
                "It runs the moves started through it and resumes every move that no mover holds."})
public final class AdminServeCommand implements Callable<Integer> {
    static final int PORT_DEFAULT = 7450;
    static final String TOKEN_GRANTS_ENV = "LASTUNIT_ADMIN_TOKEN_GRANTS";

    @Spec
    CommandSpec spec;

    @ParentCommand
    AdminCommand admin;

    @Option(names = "--host", paramLabel = "HOST", description = "The address to listen on (default ${DEFAULT-VALUE}).")
    String host = "127.0.0.1";

    @Option(names = "--port", paramLabel = "PORT", description = "The port (default ${DEFAULT-VALUE}; 0 picks a free one).")
    int port = PORT_DEFAULT;

    @Option(names = "--token-grant", paramLabel = "GRANT",
            description = {"A caller: <sha256-hex of the token>:<name>:<tenants>:admin, as the router's (repeat for more;",
                    "default: " + TOKEN_GRANTS_ENV + ", ';'-separated). Calls need the admin role."})
    List<String> tokenGrants = new ArrayList<>();

    @Option(names = "--moves-max", paramLabel = "N", description = "Most moves run here at once (default ${DEFAULT-VALUE}).")
    int movesMax = 4;

    @Option(names = "--resume-interval", paramLabel = "DURATION",
            description = "How often moves no mover holds are resumed (default ${DEFAULT-VALUE}; 0s: never).")
    String resumeInterval = "5s";

    @Option(names = "--metrics-enabled", paramLabel = "BOOL", arity = "1",
            description = "Serve metrics on a management port at /metrics (default ${DEFAULT-VALUE}).")
    boolean metricsEnabled = true;

    @Option(names = "--metrics-host", paramLabel = "HOST",
            description = "The address of the metrics port (default: --host).")
    String metricsHost = "";

    @Option(names = "--metrics-port", paramLabel = "PORT",
            description = "The metrics port (default ${DEFAULT-VALUE}: any free one, named in the start line).")
    int metricsPort = 0;

    @Option(names = "--health-port", paramLabel = "PORT",
            description = {"A plaintext port that serves only gRPC health, for probes that cannot speak TLS",
                    "(Kubernetes' gRPC probes); health 'liveness' is SERVING while the process runs",
                    "(default ${DEFAULT-VALUE}: none; 0: any free one)."})
    int healthPort = io.lastunit.common.lifecycle.NodeServer.HEALTH_PORT_OFF;

    @Override
    public Integer call() throws Exception {
        AdminServer.Config config = config();
        PrintWriter out = spec.commandLine().getOut();
        AdminServer server;
        try {
            server = new AdminServer(config).start();
        } catch (java.io.IOException e) {
            throw CliError.unreachable("the admin server did not start: " + UpCommand.rootMessage(e));
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            stopped.countDown();
        }, "lastunit-admin-shutdown"));
        out.println("lastunit admin server on " + host + ":" + server.port() + " (lastunit.admin.v1.AdminService),"
                + " topology at " + admin.zookeeper + admin.namespace
                + (server.healthPort() < 0 ? "" : "; health " + host + ":" + server.healthPort())
                + server.metricsUrl().map(u -> "; metrics " + u).orElse("") + "; Ctrl-C stops it");
        out.flush();
        stopped.await();
        return ExitCodes.OK;
    }

    AdminServer.Config config() {
        admin.validate();
        List<String> grants = new ArrayList<>(tokenGrants);
        if (grants.isEmpty()) {
            String env = System.getenv(TOKEN_GRANTS_ENV);
            if (env != null && !env.isBlank()) {
                for (String g : env.split(";")) {
                    if (!g.isBlank()) {
                        grants.add(g.trim());
                    }
                }
            }
        }
        List<String> problems = new ArrayList<>();
        if (grants.isEmpty()) {
            problems.add("--token-grant is required (or " + TOKEN_GRANTS_ENV + "): every call needs an admin token");
        }
        if (port < 0 || port > 65_535) {
            problems.add("--port " + port + " is outside [0, 65535]");
        }
        if (metricsPort < 0 || metricsPort > 65_535) {
            problems.add("--metrics-port " + metricsPort + " is outside [0, 65535]");
        }
        if (!io.lastunit.common.lifecycle.NodeServer.isHealthPort(healthPort)) {
            problems.add("--health-port " + healthPort + " is not -1 (none), 0 (any free one) or a port up to 65535");
        }
        if (movesMax < 1 || movesMax > 64) {
            problems.add("--moves-max " + movesMax + " is outside [1, 64]");
        }
        long resumeMs = 0;
        try {
            resumeMs = MoveCli.parseMillis(resumeInterval);
        } catch (IllegalArgumentException e) {
            problems.add("--resume-interval " + e.getMessage());
        }
        if (!problems.isEmpty()) {
            throw new ParameterException(spec.commandLine(), String.join("; ", problems));
        }
        try {
            return new AdminServer.Config(admin.zookeeper, admin.namespace, host, port, grants, admin.shardTrust(),
                    movesMax, Duration.ofMillis(resumeMs), MoverSettings.defaults(), MovePolicy.defaults(),
                    "admin-" + MoveCli.owner().substring(4), new io.lastunit.common.metrics.MetricsConfig(
                            metricsEnabled, metricsHost.isBlank() ? host : metricsHost, metricsPort), healthPort,
                    admin.security.mutualTls(), admin.security.zookeeper(), admin.security.zookeeperTls());
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
    }
}
