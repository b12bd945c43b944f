package io.lastunit.k8s;

import static io.lastunit.k8s.Manifests.allContainers;
import static io.lastunit.k8s.Manifests.args;
import static io.lastunit.k8s.Manifests.at;
import static io.lastunit.k8s.Manifests.containerPort;
import static io.lastunit.k8s.Manifests.id;
import static io.lastunit.k8s.Manifests.list;
import static io.lastunit.k8s.Manifests.map;
import static io.lastunit.k8s.Manifests.name;
import static io.lastunit.k8s.Manifests.option;
import static io.lastunit.k8s.Manifests.podSpec;
import static io.lastunit.k8s.Manifests.replicas;
import static io.lastunit.k8s.Manifests.str;
import static io.lastunit.k8s.Manifests.templateLabels;

import io.lastunit.k8s.NetworkPolicies.Pod;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * The rules a rendered overlay must keep (k8s/README.md, "What the test checks"), each a pure
 * function from the rendered objects to the problems it finds: an empty list is a pass, and every
 * problem names the object and the field. Kept apart from the test so that the test can also
 * show each rule failing on a broken copy (DeployRulesTest).
 */
final class DeployRules {
    static final Pattern DIGEST_IMAGE = Pattern.compile("[^@\\s]+@sha256:[0-9a-f]{64}");
    static final long NON_ROOT_UID = 65532;

    /** A lastunit service, as its image names it, with where its settings live. */
    enum Service {
        SHARD_NODE("lastunit-shard-node", "shard-node", "LASTUNIT_SHARD_", "lastunit.shard", "shard"),
        ROUTER("lastunit-router", "router", "LASTUNIT_ROUTER_", "lastunit.router", "router"),
        BALANCER("lastunit-bucket-balancer", "bucket-balancer", "LASTUNIT_BALANCER_", "lastunit.balancer", "balancer"),
        /** The admin tool: settings are options of `admin` and `admin serve`, no application.yml. */
        ADMIN("lastunit-admin", null, null, null, "admin");

        final String image;
        final String module;
        final String envPrefix;
        final String yamlPrefix;
        /** The role in its identity, spiffe://lastunit/<role>/<name> (common's io.lastunit.common.tls.Role). */
        final String role;

        Service(String image, String module, String envPrefix, String yamlPrefix, String role) {
            this.image = image;
            this.module = module;
            this.envPrefix = envPrefix;
            this.yamlPrefix = yamlPrefix;
            this.role = role;
        }

        /** The variable that carries its ZooKeeper connect string. */
        String zookeeperEnv() {
            return this == ADMIN ? "LASTUNIT_ZOOKEEPER" : envPrefix + "ZOOKEEPER";
        }

        /** The variable that carries its ZooKeeper digest credentials. */
        String zookeeperCredentialsEnv() {
            return this == ADMIN ? "LASTUNIT_ZOOKEEPER_CREDENTIALS" : envPrefix + "ZOOKEEPER_CREDENTIALS";
        }

        static Optional<Service> of(Map<String, Object> container) {
            String image = String.valueOf(container.get("image"));
            String repository = image.split("@", 2)[0].replaceFirst(":[^/]*$", "");
            String last = repository.substring(repository.lastIndexOf('/') + 1);
            for (Service s : values()) {
                if (s.image.equals(last)) {
                    return Optional.of(s);
                }
            }
            return Optional.empty();
        }
    }

    private DeployRules() {
    }

    static boolean isJob(Map<String, Object> workload) {
        return "Job".equals(workload.get("kind")) || "CronJob".equals(workload.get("kind"));
    }

    // ---- every container

    /** Digest-pinned image, requests and limits, a non-root locked-down security context, a sized JVM. */
    static List<String> containers(Manifests m) {
        List<String> problems = new ArrayList<>();
        for (Map<String, Object> w : m.workloads()) {
            Map<String, Object> pod = podSpec(w);
            Map<String, Object> podSecurity = map(pod.getOrDefault("securityContext", Map.of()), "securityContext");
            if (!Boolean.FALSE.equals(pod.get("automountServiceAccountToken"))) {
                problems.add(id(w) + ": automountServiceAccountToken is not false (no lastunit pod calls the API)");
            }
            for (Map<String, Object> c : allContainers(w)) {
                String where = id(w) + " container " + c.get("name");
                String image = str(c.get("image"));
                if (image == null || !DIGEST_IMAGE.matcher(image).matches()) {
                    problems.add(where + ": image " + image + " is not pinned by digest (<name>@sha256:<64 hex>)");
                }
                for (String kind : List.of("requests", "limits")) {
                    for (String resource : List.of("cpu", "memory")) {
                        if (at(c, "resources", kind, resource) == null) {
                            problems.add(where + ": resources." + kind + "." + resource + " is not set");
                        }
                    }
                }
                problems.addAll(security(where, podSecurity, map(c.getOrDefault("securityContext", Map.of()),
                        "securityContext")));
                Optional<Service> service = Service.of(c);
                if (service.isPresent()) {
                    String opts = m.env(c, "JAVA_TOOL_OPTIONS").orElse("");
                    if (!opts.contains("-XX:MaxRAMPercentage=")) {
                        problems.add(where + ": JAVA_TOOL_OPTIONS does not size the heap from the container's memory"
                                + " (-XX:MaxRAMPercentage=...), got '" + opts + "'");
                    }
                }
            }
        }
        return problems;
    }

    private static List<String> security(String where, Map<String, Object> pod, Map<String, Object> c) {
        List<String> problems = new ArrayList<>();
        Object nonRoot = c.containsKey("runAsNonRoot") ? c.get("runAsNonRoot") : pod.get("runAsNonRoot");
        if (!Boolean.TRUE.equals(nonRoot)) {
            problems.add(where + ": runAsNonRoot is not true");
        }
        Object uid = c.containsKey("runAsUser") ? c.get("runAsUser") : pod.get("runAsUser");
        if (!(uid instanceof Number n) || n.longValue() != NON_ROOT_UID) {
            problems.add(where + ": runAsUser is " + uid + ", not " + NON_ROOT_UID);
        }
        if (!Boolean.FALSE.equals(c.get("allowPrivilegeEscalation"))) {
            problems.add(where + ": allowPrivilegeEscalation is not false");
        }
        if (!Boolean.TRUE.equals(c.get("readOnlyRootFilesystem"))) {
            problems.add(where + ": readOnlyRootFilesystem is not true");
        }
        Object drop = at(c, "capabilities", "drop");
        if (!(drop instanceof List<?> l) || !l.contains("ALL")) {
            problems.add(where + ": capabilities.drop does not contain ALL");
        }
        Object seccomp = c.containsKey("seccompProfile") ? at(c, "seccompProfile", "type") : at(pod, "seccompProfile", "type");
        if (!"RuntimeDefault".equals(seccomp) && !"Localhost".equals(seccomp)) {
            problems.add(where + ": seccompProfile.type is " + seccomp + ", not RuntimeDefault");
        }
        return problems;
    }

    // ---- probes

    /**
     * Every container of a long-running workload has readiness and liveness probes; a lastunit
     * service's are native gRPC probes on its health port: readiness asks the whole server,
     * liveness and startup the service {@code liveness}. A Job runs to completion: no probes (an
     * init container may not have them), but a deadline and a bounded number of retries.
     */
    static List<String> probes(Manifests m) {
        List<String> problems = new ArrayList<>();
        for (Map<String, Object> w : m.workloads()) {
            if (isJob(w)) {
                Map<String, Object> spec = "CronJob".equals(w.get("kind"))
                        ? map(at(w, "spec", "jobTemplate", "spec"), "jobTemplate spec") : map(w.get("spec"), "spec");
                if (!(spec.get("activeDeadlineSeconds") instanceof Number)) {
                    problems.add(id(w) + ": a Job without activeDeadlineSeconds can run for ever");
                }
                if (!(spec.get("backoffLimit") instanceof Number)) {
                    problems.add(id(w) + ": a Job without backoffLimit");
                }
                continue;
            }
            for (Map<String, Object> c : allContainers(w)) {
                String where = id(w) + " container " + c.get("name");
                for (String probe : List.of("readinessProbe", "livenessProbe")) {
                    if (!(c.get(probe) instanceof Map<?, ?>)) {
                        problems.add(where + ": no " + probe);
                    }
                }
                Optional<Service> service = Service.of(c);
                if (service.isEmpty()) {
                    continue;
                }
                Optional<Integer> health = containerPort(c, "health");
                if (health.isEmpty()) {
                    problems.add(where + ": no container port named health");
                    continue;
                }
                problems.addAll(grpcProbe(where, c, "readinessProbe", health.get(), null));
                problems.addAll(grpcProbe(where, c, "livenessProbe", health.get(), "liveness"));
                problems.addAll(grpcProbe(where, c, "startupProbe", health.get(), "liveness"));
            }
        }
        return problems;
    }

    private static List<String> grpcProbe(String where, Map<String, Object> c, String probe, int port, String service) {
        Object grpc = at(c, probe, "grpc");
        if (!(grpc instanceof Map<?, ?>)) {
            return List.of(where + ": " + probe + " is not a grpc probe");
        }
        List<String> problems = new ArrayList<>();
        Object p = at(grpc, "port");
        if (!(p instanceof Number n) || n.intValue() != port) {
            problems.add(where + ": " + probe + " asks port " + p + ", not the health port " + port);
        }
        Object s = at(grpc, "service");
        String asked = s == null ? "" : s.toString();
        String wanted = service == null ? "" : service;
        if (!asked.equals(wanted)) {
            problems.add(where + ": " + probe + " asks health service '" + asked + "', not '" + wanted + "'");
        }
        return problems;
    }

    // ---- ports and addresses

    /** A lastunit setting of a container: its env var (or `admin serve` option), else the application.yml default. */
    static Optional<String> setting(Manifests m, Map<String, Object> c, Service s, String key) {
        if (s == Service.ADMIN) {
            return option(args(c), "--" + key);
        }
        Optional<String> env = m.env(c, s.envPrefix + key.toUpperCase(java.util.Locale.ROOT).replace('-', '_'));
        if (env.isPresent()) {
            return env;
        }
        Object dflt = Manifests.applicationDefaults(s.module).get(s.yamlPrefix + "." + key);
        return dflt == null ? Optional.empty() : Optional.of(dflt.toString());
    }

    /**
     * Each lastunit container listens where its settings say and where its Services send: the
     * grpc, health and metrics container ports equal the port settings (env, or the
     * application.yml default), it binds every address, each Service port goes to a named container
     * port of the same number, and the advertised addresses are the pod's name in its headless
     * Service.
     */
    static List<String> ports(Manifests m) {
        List<String> problems = new ArrayList<>();
        for (Map<String, Object> w : m.workloads()) {
            if (isJob(w)) {
                continue;
            }
            for (Map<String, Object> c : allContainers(w)) {
                Optional<Service> service = Service.of(c);
                if (service.isEmpty()) {
                    continue;
                }
                Service s = service.get();
                String where = id(w) + " container " + c.get("name");
                for (String[] pair : new String[][] {{"grpc", "port"}, {"health", "health-port"},
                        {"metrics", "metrics-port"}}) {
                    Optional<Integer> cp = containerPort(c, pair[0]);
                    Optional<String> set = setting(m, c, s, pair[1]);
                    if (cp.isEmpty()) {
                        problems.add(where + ": no container port named " + pair[0]);
                    } else if (set.isEmpty() || !set.get().equals(String.valueOf(cp.get()))) {
                        problems.add(where + ": container port " + pair[0] + "=" + cp.get() + " but its setting "
                                + pair[1] + " is " + set.orElse("unset"));
                    }
                }
                Optional<String> host = setting(m, c, s, "host");
                if (!host.equals(Optional.of("0.0.0.0"))) {
                    problems.add(where + ": host is " + host.orElse("unset") + ": it must bind 0.0.0.0 to be reachable");
                }
                if (s == Service.ROUTER) {
                    long age = Long.parseLong(setting(m, c, s, "max-connection-age-ms").orElse("0"));
                    if (age <= 0) {
                        problems.add(where + ": max-connection-age-ms is not set: clients would stay on old routers");
                    }
                }
            }
        }
        problems.addAll(servicePorts(m));
        problems.addAll(advertised(m, "shard-node", "LASTUNIT_SHARD_ADVERTISED_ADDRESS", "$(LASTUNIT_SHARD_ID)",
                "LASTUNIT_SHARD_ID"));
        problems.addAll(advertised(m, "bucket-balancer", "LASTUNIT_BALANCER_ADVERTISED_ADDRESS", "$(POD_NAME)",
                "POD_NAME"));
        return problems;
    }

    private static List<String> servicePorts(Manifests m) {
        List<String> problems = new ArrayList<>();
        for (Map<String, Object> svc : m.kind("Service")) {
            Map<String, Object> selector = map(at(svc, "spec", "selector") == null ? Map.of() : at(svc, "spec", "selector"),
                    "selector");
            List<Map<String, Object>> backing = m.workloads().stream()
                    .filter(w -> !selector.isEmpty() && NetworkPolicies.selects(Map.of("matchLabels", selector),
                            stringLabels(templateLabels(w)))).toList();
            if (backing.isEmpty()) {
                problems.add(id(svc) + ": selects no pods of this overlay");
                continue;
            }
            for (Object p : list(at(svc, "spec", "ports"), id(svc) + " ports")) {
                Map<String, Object> port = map(p, "port");
                Object target = port.getOrDefault("targetPort", port.get("port"));
                for (Map<String, Object> w : backing) {
                    Optional<Integer> found = allContainers(w).stream()
                            .map(c -> target instanceof Number n ? Optional.of(n.intValue())
                                    : containerPort(c, String.valueOf(target)))
                            .flatMap(Optional::stream).findFirst();
                    if (found.isEmpty()) {
                        problems.add(id(svc) + " port " + port.get("name") + ": target " + target + " is no container"
                                + " port of " + id(w));
                    } else if (found.get() != ((Number) port.get("port")).intValue()) {
                        problems.add(id(svc) + " port " + port.get("name") + "=" + port.get("port")
                                + " goes to container port " + found.get() + " of " + id(w) + ": keep them equal");
                    }
                }
            }
        }
        return problems;
    }

    /** The StatefulSet of {@code component} advertises {@code <pod name>.<headless service>:<grpc port>}. */
    private static List<String> advertised(Manifests m, String component, String env, String podRef, String podVar) {
        List<String> problems = new ArrayList<>();
        Map<String, Object> sts = m.workload(component);
        String where = id(sts);
        if (!"StatefulSet".equals(sts.get("kind"))) {
            return List.of(where + ": not a StatefulSet, so its pods have no stable names to advertise");
        }
        String serviceName = str(at(sts, "spec", "serviceName"));
        Optional<Map<String, Object>> svc = m.find("Service", serviceName);
        if (svc.isEmpty() || !"None".equals(at(svc.get(), "spec", "clusterIP"))) {
            problems.add(where + ": serviceName " + serviceName + " is not a rendered headless Service");
        } else if (!Boolean.TRUE.equals(at(svc.get(), "spec", "publishNotReadyAddresses"))) {
            problems.add(id(svc.get()) + ": publishNotReadyAddresses is not true: a node's name would come and go");
        }
        Map<String, Object> c = map(list(podSpec(sts).get("containers"), "containers").get(0), "container");
        if (!m.env(c, podVar).equals(Optional.of("<metadata.name>"))) {
            problems.add(where + ": " + podVar + " is not the pod's name (fieldRef metadata.name)");
        }
        int grpc = containerPort(c, "grpc").orElse(-1);
        String wanted = podRef + "." + serviceName + ":" + grpc;
        Optional<String> actual = m.env(c, env);
        if (!actual.equals(Optional.of(wanted))) {
            problems.add(where + ": " + env + " is " + actual.orElse("unset") + ", not " + wanted);
        }
        return problems;
    }

    /** The DNS names the pods of a StatefulSet have in its headless Service: {@code sts-i.service}. */
    static List<String> podNames(Map<String, Object> sts) {
        String serviceName = str(at(sts, "spec", "serviceName"));
        return IntStream.range(0, replicas(sts)).mapToObj(i -> name(sts) + "-" + i + "." + serviceName).toList();
    }

    // ---- ZooKeeper

    /**
     * Every lastunit process takes its ZooKeeper connect string and topology root from the platform
     * ConfigMap, whose connect string lists exactly the ensemble's nodes at their names in the
     * headless Service and the port its clients use (the secure client port where zoo.cfg has one,
     * else the client port), which the ZooKeeper container opens; the ensemble's own zoo.cfg lists
     * the same nodes.
     */
    static List<String> zookeeper(Manifests m) {
        List<String> problems = new ArrayList<>();
        Map<String, Object> zk = m.workload("zookeeper");
        Map<String, Object> zkContainer = map(list(podSpec(zk).get("containers"), "containers").get(0), "container");
        Properties cfg = zooCfg(m);
        int client = zookeeperClientPort(cfg);
        if (client < 0) {
            problems.add(id(zk) + ": zoo.cfg sets neither clientPort nor secureClientPort");
        } else if (!hasContainerPort(zkContainer, client)) {
            problems.add(id(zk) + ": no container port " + client + ", the port its clients use");
        }
        List<String> nodes = podNames(zk);
        String ensemble = nodes.stream().map(n -> n + ":" + client).collect(Collectors.joining(","));
        if (replicas(zk) != 3) {
            problems.add(id(zk) + ": " + replicas(zk) + " ZooKeeper nodes, not 3");
        }
        for (Map<String, Object> w : m.workloads()) {
            for (Map<String, Object> c : allContainers(w)) {
                Optional<Service> s = Service.of(c);
                if (s.isEmpty()) {
                    continue;
                }
                String where = id(w) + " container " + c.get("name");
                String zkVar = s.get().zookeeperEnv();
                Optional<String> connect = m.env(c, zkVar);
                if (!connect.equals(Optional.of(ensemble))) {
                    problems.add(where + ": " + zkVar + " is " + connect.orElse("unset") + ", not the ensemble "
                            + ensemble);
                }
                if (!Manifests.configMapKeyOf(c, zkVar).equals(Optional.of("ZOOKEEPER"))) {
                    problems.add(where + ": " + zkVar + " does not come from the platform ConfigMap's ZOOKEEPER");
                }
                String rootVar = s.get() == Service.ADMIN ? "LASTUNIT_TOPOLOGY_ROOT" : s.get().envPrefix + "NAMESPACE";
                if (!Manifests.configMapKeyOf(c, rootVar).equals(Optional.of("TOPOLOGY_ROOT"))) {
                    problems.add(where + ": " + rootVar + " does not come from the platform ConfigMap's TOPOLOGY_ROOT");
                }
                if (s.get() == Service.ADMIN && !option(args(c), "--namespace").equals(Optional.of("$(" + rootVar + ")"))) {
                    problems.add(where + ": admin --namespace is not $(" + rootVar + ")");
                }
            }
        }
        for (int i = 0; i < nodes.size(); i++) {
            String key = "server." + (i + 1);
            String wanted = nodes.get(i) + ":2888:3888";
            if (!wanted.equals(cfg.getProperty(key))) {
                problems.add(id(zk) + ": zoo.cfg has " + key + "=" + cfg.getProperty(key) + ", not " + wanted
                        + " (the client port is clientPort's, not the server line's)");
            }
        }
        return problems;
    }

    /** The zoo.cfg of the ZooKeeper StatefulSet (its ConfigMap volume {@code conf}), as ZooKeeper reads it. */
    static Properties zooCfg(Manifests m) {
        String cfgMap = findVolumeConfigMap(m.workload("zookeeper"), "conf");
        Properties cfg = new Properties();
        if (cfgMap != null) {
            try {
                cfg.load(new java.io.StringReader(m.configMapValue(cfgMap, "zoo.cfg")));
            } catch (java.io.IOException e) {
                throw new AssertionError("zoo.cfg: " + e.getMessage(), e);
            }
        }
        return cfg;
    }

    /** The port ZooKeeper's clients dial: the secure client port where there is one, else the client port; -1: none. */
    static int zookeeperClientPort(Properties cfg) {
        String port = cfg.getProperty("secureClientPort", cfg.getProperty("clientPort"));
        try {
            return port == null ? -1 : Integer.parseInt(port.trim());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static boolean hasContainerPort(Map<String, Object> c, int port) {
        return list(c.getOrDefault("ports", List.of()), "ports").stream()
                .anyMatch(p -> map(p, "port").get("containerPort") instanceof Number n && n.intValue() == port);
    }

    private static String findVolumeConfigMap(Map<String, Object> w, String volume) {
        for (Object v : list(podSpec(w).getOrDefault("volumes", List.of()), "volumes")) {
            Map<String, Object> vol = map(v, "volume");
            if (volume.equals(vol.get("name"))) {
                return str(at(vol, "configMap", "name"));
            }
        }
        return null;
    }

    // ---- shards, their databases and the bootstrap

    /**
     * Shard node N is pod lastunit-shard-N; it owns the CloudNativePG cluster
     * {@code <pod>-db} and reaches it at its -rw service; there is one such cluster per shard and
     * no other; the bootstrap Job creates the cell with exactly these shards at their advertised
     * addresses, idempotently.
     */
    static List<String> shards(Manifests m) {
        List<String> problems = new ArrayList<>();
        Map<String, Object> sts = m.workload("shard-node");
        Map<String, Object> c = map(list(podSpec(sts).get("containers"), "containers").get(0), "container");
        List<String> pods = IntStream.range(0, replicas(sts)).mapToObj(i -> name(sts) + "-" + i).toList();
        Set<String> clusters = m.kind("Cluster").stream().map(Manifests::name).collect(Collectors.toCollection(TreeSet::new));
        Set<String> wanted = pods.stream().map(p -> p + "-db").collect(Collectors.toCollection(TreeSet::new));
        if (!clusters.equals(wanted)) {
            problems.add("CloudNativePG clusters " + clusters + " are not one per shard " + wanted);
        }
        Optional<String> jdbc = m.env(c, "LASTUNIT_SHARD_JDBC_URL");
        if (jdbc.isEmpty() || !jdbc.get().startsWith("jdbc:postgresql://$(LASTUNIT_SHARD_ID)-db-rw:5432/")) {
            problems.add(id(sts) + ": LASTUNIT_SHARD_JDBC_URL is " + jdbc.orElse("unset")
                    + ", not jdbc:postgresql://$(LASTUNIT_SHARD_ID)-db-rw:5432/... (its own cluster's primary)");
        }
        for (Map<String, Object> cluster : m.kind("Cluster")) {
            String image = str(at(cluster, "spec", "imageName"));
            if (image == null || !DIGEST_IMAGE.matcher(image).matches()) {
                problems.add(id(cluster) + ": imageName " + image + " is not pinned by digest");
            }
            for (String kind : List.of("requests", "limits")) {
                for (String r : List.of("cpu", "memory")) {
                    if (at(cluster, "spec", "resources", kind, r) == null) {
                        problems.add(id(cluster) + ": resources." + kind + "." + r + " is not set");
                    }
                }
            }
            Object secret = at(cluster, "spec", "bootstrap", "initdb", "secret", "name");
            String userSecret = m.env(c, "LASTUNIT_SHARD_JDBC_USER").orElse("");
            if (secret == null || !userSecret.startsWith("<secret " + secret + "/")) {
                problems.add(id(cluster) + ": its owner's Secret " + secret + " is not the one the shard nodes log in"
                        + " with (" + userSecret + ")");
            }
        }
        problems.addAll(bootstrap(m, sts, c));
        return problems;
    }

    private static List<String> bootstrap(Manifests m, Map<String, Object> sts, Map<String, Object> shard) {
        List<String> problems = new ArrayList<>();
        List<Map<String, Object>> jobs = m.workloads("bootstrap");
        if (jobs.size() != 1 || !"Job".equals(jobs.get(0).get("kind"))) {
            return List.of("expected one bootstrap Job, found " + jobs.stream().map(Manifests::id).toList());
        }
        Map<String, Object> job = jobs.get(0);
        List<Map<String, Object>> containers = allContainers(job);
        int port = containerPort(shard, "grpc").orElse(-1);
        Set<String> wanted = new TreeSet<>();
        for (String pod : podNames(sts)) {
            String id = pod.substring(0, pod.indexOf('.'));
            wanted.add(id + "=$(REGION)=" + pod + ":" + port);
        }
        Set<String> created = new TreeSet<>();
        for (Map<String, Object> c : containers) {
            List<String> a = args(c);
            String where = id(job) + " container " + c.get("name");
            if (Service.of(c).orElse(null) != Service.ADMIN || a.size() < 6
                    || !a.subList(0, 1).equals(List.of("admin")) || a.indexOf("cells") < 0
                    || !"create".equals(a.get(a.indexOf("cells") + 1))) {
                problems.add(where + ": not `admin ... cells create`: " + a);
                continue;
            }
            if (!a.contains("--exists-ok")) {
                problems.add(where + ": cells create without --exists-ok fails on every run after the first");
            }
            for (int i = 0; i + 1 < a.size(); i++) {
                if ("--shard".equals(a.get(i))) {
                    created.add(a.get(i + 1));
                }
            }
        }
        if (!created.equals(wanted)) {
            problems.add(id(job) + ": creates shards " + created + ", not the shard nodes " + wanted);
        }
        Optional<String> region = m.env(shard, "LASTUNIT_SHARD_REGIONS");
        for (Map<String, Object> c : containers) {
            if (!m.env(c, "REGION").equals(region)) {
                problems.add(id(job) + " container " + c.get("name") + ": REGION " + m.env(c, "REGION").orElse("unset")
                        + " is not the shard nodes' region " + region.orElse("unset"));
            }
        }
        return problems;
    }

    // ---- disruption budgets

    /**
     * ZooKeeper, routers, shard nodes and balancers are each selected by exactly one
     * PodDisruptionBudget that allows one pod down and no more (ZooKeeper keeps its quorum, a
     * drain never blocks for good); routers, balancers and ZooKeeper run at least 2, 2 and 3.
     */
    static List<String> disruptionBudgets(Manifests m) {
        List<String> problems = new ArrayList<>();
        Map<String, Integer> least = Map.of("zookeeper", 3, "router", 2, "shard-node", 1, "bucket-balancer", 2);
        for (var e : least.entrySet()) {
            for (Map<String, Object> w : m.workloads(e.getKey())) {
                if (replicas(w) < e.getValue()) {
                    problems.add(id(w) + ": " + replicas(w) + " replicas, fewer than " + e.getValue());
                }
                Map<String, String> labels = stringLabels(templateLabels(w));
                List<Map<String, Object>> pdbs = m.kind("PodDisruptionBudget").stream()
                        .filter(p -> NetworkPolicies.selects(map(at(p, "spec", "selector"), "selector"), labels)).toList();
                if (pdbs.size() != 1) {
                    problems.add(id(w) + ": selected by " + pdbs.size() + " PodDisruptionBudgets, not 1");
                    continue;
                }
                Map<String, Object> spec = map(pdbs.get(0).get("spec"), "spec");
                int down = spec.get("maxUnavailable") instanceof Number n ? n.intValue()
                        : spec.get("minAvailable") instanceof Number n2 ? replicas(w) - n2.intValue() : -1;
                if (down != 1) {
                    problems.add(id(pdbs.get(0)) + ": lets " + down + " of " + id(w) + " go at once, not 1");
                }
            }
            if (m.workloads(e.getKey()).isEmpty()) {
                problems.add("no workload of component " + e.getKey());
            }
        }
        return problems;
    }

    // ---- network policies

    /**
     * A default deny; shard nodes' gRPC port reachable from routers, balancers and the admin tool
     * only; each shard's database from its own shard node (and its own instances) only; ZooKeeper
     * from lastunit's processes only; every metrics port from the monitoring namespace.
     */
    static List<String> networkPolicies(Manifests m) {
        List<String> problems = new ArrayList<>();
        NetworkPolicies np = new NetworkPolicies(m);
        boolean defaultDeny = m.kind("NetworkPolicy").stream().anyMatch(p -> {
            Object sel = at(p, "spec", "podSelector");
            Object ingress = at(p, "spec", "ingress");
            return sel instanceof Map<?, ?> s && s.isEmpty() && (ingress == null || ((List<?>) ingress).isEmpty());
        });
        if (!defaultDeny) {
            problems.add("no default-deny ingress NetworkPolicy (podSelector {} without rules)");
        }
        Pod anonymous = np.inNamespace("an unlabelled pod", Map.of());
        Pod otherNamespace = NetworkPolicies.elsewhere("somewhere-else");
        Pod monitoring = NetworkPolicies.elsewhere("monitoring");
        List<Pod> strangers = List.of(anonymous, otherNamespace);

        Map<String, Object> shardSts = m.workload("shard-node");
        int shardPort = containerPort(map(list(podSpec(shardSts).get("containers"), "containers").get(0), "c"), "grpc")
                .orElse(-1);
        Set<String> callers = Set.of("router", "bucket-balancer", "admin");
        for (Pod shard : np.podsWith("app.kubernetes.io/component", "shard-node")) {
            for (Pod source : np.pods) {
                boolean should = callers.contains(source.labels().get("app.kubernetes.io/component"));
                if (np.allows(source, shard, shardPort) != should) {
                    problems.add("NetworkPolicy: " + source.name() + (should ? " cannot" : " can") + " reach shard node "
                            + shard.name() + ":" + shardPort);
                }
            }
            for (Pod s : strangers) {
                if (np.allows(s, shard, shardPort)) {
                    problems.add("NetworkPolicy: " + s.name() + " can reach shard node " + shard.name() + ":" + shardPort);
                }
            }
        }
        for (Map<String, Object> cluster : m.kind("Cluster")) {
            String clusterName = name(cluster);
            String owner = clusterName.replaceFirst("-db$", "");
            for (Pod db : np.podsWith("cnpg.io/cluster", clusterName)) {
                for (Pod source : np.pods) {
                    boolean should = owner.equals(source.labels().get("statefulset.kubernetes.io/pod-name"))
                            || clusterName.equals(source.labels().get("cnpg.io/cluster"));
                    if (np.allows(source, db, 5432) != should) {
                        problems.add("NetworkPolicy: " + source.name() + (should ? " cannot" : " can")
                                + " reach database " + db.name() + ":5432");
                    }
                }
                for (Pod s : List.of(anonymous, otherNamespace, monitoring)) {
                    if (np.allows(s, db, 5432)) {
                        problems.add("NetworkPolicy: " + s.name() + " can reach database " + db.name() + ":5432");
                    }
                }
            }
        }
        Set<String> zkClients = Set.of("shard-node", "router", "bucket-balancer", "admin", "bootstrap", "zookeeper");
        int zkPort = zookeeperClientPort(zooCfg(m));
        for (Pod zk : np.podsWith("app.kubernetes.io/component", "zookeeper")) {
            for (Pod source : np.pods) {
                String component = source.labels().getOrDefault("app.kubernetes.io/component", "");
                boolean should = zkClients.contains(component)
                        && "lastunit".equals(source.labels().get("app.kubernetes.io/part-of"));
                if (np.allows(source, zk, zkPort) != should) {
                    problems.add("NetworkPolicy: " + source.name() + (should ? " cannot" : " can") + " reach ZooKeeper "
                            + zk.name() + ":" + zkPort);
                }
            }
            for (Pod s : strangers) {
                if (np.allows(s, zk, zkPort)) {
                    problems.add("NetworkPolicy: " + s.name() + " can reach ZooKeeper " + zk.name() + ":" + zkPort);
                }
            }
        }
        for (Map<String, Object> w : m.workloads()) {
            for (Map<String, Object> c : allContainers(w)) {
                Optional<Integer> metrics = containerPort(c, "metrics");
                if (metrics.isEmpty()) {
                    continue;
                }
                String pods = Pattern.quote(name(w)) + "(-\\d+)?";
                for (Pod p : np.pods.stream().filter(p -> p.name().matches(pods)).toList()) {
                    if (!np.allows(monitoring, p, metrics.get())) {
                        problems.add("NetworkPolicy: Prometheus (namespace monitoring) cannot scrape " + p.name() + ":"
                                + metrics.get());
                    }
                }
            }
        }
        return problems;
    }

    // ---- monitoring

    /**
     * The ServiceMonitor scrapes a metrics port of every lastunit service, names each job from the
     * Service's label, and those jobs include every job the alert rules ask for.
     */
    static List<String> monitoring(Manifests m, String rulesText) {
        List<String> problems = new ArrayList<>();
        List<Map<String, Object>> monitors = m.kind("ServiceMonitor");
        if (monitors.size() != 1) {
            return List.of(monitors.size() + " ServiceMonitors, not 1");
        }
        Map<String, Object> sm = monitors.get(0);
        String jobLabel = str(at(sm, "spec", "jobLabel"));
        Map<String, Object> selector = map(at(sm, "spec", "selector"), "ServiceMonitor selector");
        Set<String> endpointPorts = list(at(sm, "spec", "endpoints"), "endpoints").stream()
                .map(e -> str(map(e, "endpoint").get("port"))).collect(Collectors.toSet());
        Set<String> jobs = new TreeSet<>();
        for (Map<String, Object> svc : m.kind("Service")) {
            if (!NetworkPolicies.selects(selector, stringLabels(Manifests.labels(svc)))) {
                continue;
            }
            Object job = jobLabel == null ? null : Manifests.labels(svc).get(jobLabel);
            if (job == null) {
                problems.add(id(svc) + ": scraped but has no label " + jobLabel + " to name its job");
            } else {
                jobs.add(job.toString());
            }
            boolean hasPort = list(at(svc, "spec", "ports"), "ports").stream()
                    .anyMatch(p -> endpointPorts.contains(str(map(p, "port").get("name"))));
            if (!hasPort) {
                problems.add(id(svc) + ": scraped but has no port named " + endpointPorts);
            }
        }
        Matcher job = Pattern.compile("job=\"([^\"]+)\"").matcher(rulesText);
        Set<String> wanted = new TreeSet<>(Set.of("lastunit-shard", "lastunit-router", "lastunit-balancer", "lastunit-admin"));
        while (job.find()) {
            wanted.add(job.group(1));
        }
        if (!jobs.containsAll(wanted)) {
            Set<String> missing = new LinkedHashSet<>(wanted);
            missing.removeAll(jobs);
            problems.add("the alert rules and docs/observability.md expect scrape jobs " + missing
                    + " that no scraped Service names (scraped: " + jobs + ")");
        }
        return problems;
    }

    // ---- secrets

    /** Every Secret a pod, a database or an object store uses is rendered, issued by a Certificate, or declared external. */
    static List<String> secrets(Manifests m, Set<String> external) {
        Set<String> provided = new TreeSet<>();
        m.kind("Secret").forEach(s -> provided.add(name(s)));
        m.kind("Certificate").forEach(c -> provided.add(str(at(c, "spec", "secretName"))));
        Set<String> used = new TreeSet<>();
        for (Map<String, Object> w : m.workloads()) {
            for (Object v : list(podSpec(w).getOrDefault("volumes", List.of()), "volumes")) {
                Object s = at(v, "secret", "secretName");
                if (s != null) {
                    used.add(s.toString());
                }
            }
            for (Map<String, Object> c : allContainers(w)) {
                for (Object e : list(c.getOrDefault("env", List.of()), "env")) {
                    Object s = at(e, "valueFrom", "secretKeyRef", "name");
                    if (s != null) {
                        used.add(s.toString());
                    }
                }
            }
        }
        m.kind("Cluster").forEach(c -> {
            Object s = at(c, "spec", "bootstrap", "initdb", "secret", "name");
            if (s != null) {
                used.add(s.toString());
            }
        });
        m.kind("ObjectStore").forEach(o -> {
            for (String key : List.of("accessKeyId", "secretAccessKey")) {
                Object s = at(o, "spec", "configuration", "s3Credentials", key, "name");
                if (s != null) {
                    used.add(s.toString());
                }
            }
        });
        List<String> problems = new ArrayList<>();
        Set<String> missing = new TreeSet<>(used);
        missing.removeAll(provided);
        if (!missing.equals(external)) {
            problems.add(m.overlay + ": Secrets used but not made here " + missing + ", declared external " + external);
        }
        return problems;
    }

    // ---- production databases

    /**
     * Each shard database has at least three instances, commits that wait for one standby of a
     * quorum and never fall back to asynchronous, a failover only to a standby the quorum says is
     * current, WAL archived to an object store that is rendered, and a scheduled base backup.
     */
    static List<String> productionDatabases(Manifests m) {
        List<String> problems = new ArrayList<>();
        Set<String> stores = m.kind("ObjectStore").stream().map(Manifests::name).collect(Collectors.toSet());
        List<Map<String, Object>> clusters = m.kind("Cluster");
        if (clusters.isEmpty()) {
            problems.add("no CloudNativePG Cluster");
        }
        for (Map<String, Object> c : clusters) {
            String where = id(c);
            Object instances = at(c, "spec", "instances");
            if (!(instances instanceof Number n) || n.intValue() < 3) {
                problems.add(where + ": instances " + instances + ", fewer than 3");
            }
            Map<String, Object> sync = at(c, "spec", "postgresql", "synchronous") instanceof Map<?, ?>
                    ? map(at(c, "spec", "postgresql", "synchronous"), "synchronous") : Map.of();
            if (!"any".equals(sync.get("method"))) {
                problems.add(where + ": postgresql.synchronous.method is " + sync.get("method") + ", not any");
            }
            if (!(sync.get("number") instanceof Number n) || n.intValue() != 1) {
                problems.add(where + ": postgresql.synchronous.number is " + sync.get("number") + ", not 1");
            }
            if (!"required".equals(sync.get("dataDurability"))) {
                problems.add(where + ": postgresql.synchronous.dataDurability is " + sync.get("dataDurability")
                        + ", not required");
            }
            if (!Boolean.TRUE.equals(sync.get("failoverQuorum"))) {
                problems.add(where + ": postgresql.synchronous.failoverQuorum is not true: a failover could promote"
                        + " the standby that was not synchronous");
            }
            String archiver = null;
            for (Object p : list(at(c, "spec") instanceof Map<?, ?> s && s.get("plugins") != null ? s.get("plugins")
                    : List.of(), "plugins")) {
                Map<String, Object> plugin = map(p, "plugin");
                if (Boolean.TRUE.equals(plugin.get("isWALArchiver"))) {
                    archiver = str(plugin.get("name"));
                    Object store = at(plugin, "parameters", "barmanObjectName");
                    if (store == null || !stores.contains(store.toString())) {
                        problems.add(where + ": its WAL archiver names object store " + store + ", not a rendered"
                                + " ObjectStore " + stores);
                    }
                }
            }
            boolean inTree = at(c, "spec", "backup", "barmanObjectStore", "destinationPath") != null;
            if (archiver == null && !inTree) {
                problems.add(where + ": no backup declared (a WAL-archiver plugin or backup.barmanObjectStore)");
            }
            String pluginName = archiver;
            boolean scheduled = m.kind("ScheduledBackup").stream().anyMatch(b ->
                    name(c).equals(at(b, "spec", "cluster", "name")) && str(at(b, "spec", "schedule")) != null
                            && (pluginName == null ? !"plugin".equals(at(b, "spec", "method"))
                            : "plugin".equals(at(b, "spec", "method"))
                            && pluginName.equals(at(b, "spec", "pluginConfiguration", "name"))));
            if (!scheduled) {
                problems.add(where + ": no ScheduledBackup of it by its backup method");
            }
        }
        return problems;
    }

    // ---- production certificates, mutual TLS and ZooKeeper credentials

    static final String TLS_DIR = "/etc/lastunit/tls";
    static final Pattern IDENTITY = Pattern.compile("spiffe://lastunit/([^/]+)/[A-Za-z0-9._-]{1,64}");

    /**
     * Each service identity has a cert-manager Certificate from one issuer, with a PKCS#8 key (what
     * the services read), server and client auth (client auth only for one no workload mounts: a
 * caller's, and prod has one of an admin identity for operators' tool pods), exactly one identity URI
     * (spiffe://lastunit/<role>/<name>) and every name its peers dial; ZooKeeper's Certificate
     * (the one its pods mount) has none. Every lastunit service of a
     * long-running workload mounts such a Certificate's Secret at /etc/lastunit/tls, whose
     * identity has its own role, and gives its mtls certificate, key and CA as that Secret's
     * files; no lastunit container uses the server-only settings for an internal hop
     * (tls-certificate on shard nodes and balancers, shard-trust-certificate anywhere). The router's
     * public listener serves TLS with the mounted certificate.
     */
    static List<String> productionTls(Manifests m) {
        List<String> problems = new ArrayList<>();
        Set<String> zookeeperSecrets = secretVolumes(m.workload("zookeeper")).keySet();
        Set<String> mounted = new java.util.HashSet<>();
        m.workloads().forEach(w -> mounted.addAll(secretVolumes(w).keySet()));
        Map<String, Map<String, Object>> bySecret = new java.util.HashMap<>();
        boolean operators = false;
        for (Map<String, Object> cert : m.kind("Certificate")) {
            bySecret.put(str(at(cert, "spec", "secretName")), cert);
            if (!"cert-manager.io/v1".equals(cert.get("apiVersion"))) {
                problems.add(id(cert) + ": apiVersion " + cert.get("apiVersion") + ", not cert-manager.io/v1");
            }
            if (at(cert, "spec", "issuerRef", "name") == null || at(cert, "spec", "issuerRef", "kind") == null) {
                problems.add(id(cert) + ": no issuerRef name and kind");
            }
            if (!"PKCS8".equals(at(cert, "spec", "privateKey", "encoding"))) {
                problems.add(id(cert) + ": privateKey.encoding is not PKCS8 (the services read PKCS#8 keys)");
            }
            List<String> usages = strings(at(cert, "spec", "usages"));
            List<String> identities = strings(at(cert, "spec", "uris")).stream()
                    .filter(u -> u.startsWith("spiffe://lastunit/")).toList();
            boolean mountedByAWorkload = mounted.contains(str(at(cert, "spec", "secretName")));
            if (!mountedByAWorkload) {
                // A caller's certificate (a tool pod's): it dials and serves nothing.
                if (!usages.contains("client auth") || usages.contains("server auth")) {
                    problems.add(id(cert) + ": mounted by no workload (a caller's), but usages " + usages
                            + " are not client auth without server auth");
                }
                operators |= identities.size() == 1 && identities.get(0).startsWith("spiffe://lastunit/admin/");
            } else if (!usages.contains("server auth") || !usages.contains("client auth")) {
                problems.add(id(cert) + ": usages " + usages + " lack server auth or client auth: the same certificate"
                        + " serves the listener and dials the others");
            }
            if (zookeeperSecrets.contains(str(at(cert, "spec", "secretName")))) {
                if (!identities.isEmpty()) {
                    problems.add(id(cert) + ": ZooKeeper's certificate names the lastunit identities " + identities
                            + ": ZooKeeper is not a lastunit service, and its key must not pass for one");
                }
            } else if (identities.size() != 1 || !IDENTITY.matcher(identities.get(0)).matches()) {
                problems.add(id(cert) + ": uris " + identities + " are not exactly one identity"
                        + " spiffe://lastunit/<role>/<name>");
            }
        }
        if (!operators) {
            problems.add("no Certificate of an admin identity for operators' tool pods (mounted by no workload):"
                    + " the pods labelled lastunit.io/admin-client=true that the NetworkPolicy lastunit-admin admits"
                    + " would have no certificate the admin server takes");
        }
        Set<String> issuers = m.kind("Certificate").stream().map(c -> at(c, "spec", "issuerRef", "kind") + "/"
                + at(c, "spec", "issuerRef", "name")).collect(Collectors.toSet());
        if (issuers.size() != 1) {
            problems.add("Certificates from " + issuers.size() + " issuers " + issuers + ": one CA must sign them all");
        }
        for (String component : List.of("shard-node", "router", "bucket-balancer", "admin")) {
            m.workload(component);
        }
        for (Map<String, Object> w : m.workloads()) {
            for (Map<String, Object> c : allContainers(w)) {
                Optional<Service> service = Service.of(c);
                if (service.isEmpty()) {
                    continue;
                }
                problems.addAll(noServerOnlyTls(m, w, c, service.get()));
                if (!isJob(w)) {
                    problems.addAll(mutualTls(m, w, c, service.get(), bySecret));
                }
            }
        }
        Map<String, Object> router = m.workload("router");
        Map<String, Object> routerCert = mountedCertificate(router,
                map(list(podSpec(router).get("containers"), "c").get(0), "c"), bySecret).orElse(Map.of());
        if (!strings(at(routerCert, "spec", "dnsNames")).contains("lastunit-router")) {
            problems.add("the router's Certificate lacks its Service's name lastunit-router");
        }
        Map<String, Object> admin = m.workload("admin");
        Map<String, Object> adminCert = mountedCertificate(admin,
                map(list(podSpec(admin).get("containers"), "c").get(0), "c"), bySecret).orElse(Map.of());
        if (!strings(at(adminCert, "spec", "dnsNames")).contains("lastunit-admin")) {
            problems.add("the admin server's Certificate lacks its Service's name lastunit-admin");
        }
        return problems;
    }

    private static List<String> mutualTls(Manifests m, Map<String, Object> w, Map<String, Object> c, Service s,
            Map<String, Map<String, Object>> bySecret) {
        List<String> problems = new ArrayList<>();
        String where = id(w) + " container " + c.get("name");
        Optional<Map<String, Object>> cert = mountedCertificate(w, c, bySecret);
        if (cert.isEmpty()) {
            problems.add(where + ": no Certificate's Secret is mounted at " + TLS_DIR);
            return problems;
        }
        List<String> identities = strings(at(cert.get(), "spec", "uris")).stream()
                .filter(u -> u.startsWith("spiffe://lastunit/")).toList();
        boolean ownRole = identities.size() == 1 && IDENTITY.matcher(identities.get(0)).matches()
                && identities.get(0).startsWith("spiffe://lastunit/" + s.role + "/");
        if (!ownRole) {
            problems.add(where + ": its " + id(cert.get()) + " names " + identities + ", not one identity of role "
                    + s.role + " (spiffe://lastunit/" + s.role + "/<name>): its peers' allow-lists would refuse it");
        }
        List<String> dnsNames = strings(at(cert.get(), "spec", "dnsNames"));
        if ("StatefulSet".equals(w.get("kind"))) {
            for (String dialed : podNames(w)) {
                if (!dnsNames.contains(dialed)) {
                    problems.add(id(cert.get()) + ": lacks " + dialed + ", the address peers dial " + id(w) + " at");
                }
            }
        }
        String[][] files = {{"certificate", "tls.crt"}, {"key", "tls.key"}, {"ca", "ca.crt"}};
        for (String[] f : files) {
            String wanted = TLS_DIR + "/" + f[1];
            String setting;
            Optional<String> value;
            if (s == Service.ADMIN) {
                setting = "--tls-" + ("certificate".equals(f[0]) ? "cert" : f[0]);
                value = option(args(c), setting);
            } else {
                setting = s.envPrefix + "MTLS_" + f[0].toUpperCase(java.util.Locale.ROOT);
                value = m.env(c, setting);
            }
            if (!value.equals(Optional.of(wanted))) {
                problems.add(where + ": " + setting + " is " + value.orElse("unset") + ", not " + wanted
                        + ": no mutual TLS on its internal hops");
            }
        }
        if (s == Service.ADMIN && args(c).contains("serve") && args(c).indexOf("--tls-cert") > args(c).indexOf("serve")) {
            problems.add(where + ": --tls-cert comes after serve: it is an option of admin, before the subcommand");
        }
        if (s == Service.ROUTER) {
            for (String[] kv : new String[][] {{"TLS_CERTIFICATE", TLS_DIR + "/tls.crt"}, {"TLS_KEY", TLS_DIR + "/tls.key"}}) {
                if (!m.env(c, s.envPrefix + kv[0]).equals(Optional.of(kv[1]))) {
                    problems.add(where + ": " + s.envPrefix + kv[0] + " is not " + kv[1] + ": its public listener is"
                            + " plaintext");
                }
            }
        }
        return problems;
    }

    /** The server-only TLS settings, which mutual TLS replaces on the internal hops (docs/authentication.md). */
    private static List<String> noServerOnlyTls(Manifests m, Map<String, Object> w, Map<String, Object> c, Service s) {
        List<String> problems = new ArrayList<>();
        String where = id(w) + " container " + c.get("name");
        List<String> old = switch (s) {
            case SHARD_NODE -> List.of("TLS_CERTIFICATE", "TLS_KEY");
            case BALANCER -> List.of("TLS_CERTIFICATE", "TLS_KEY", "SHARD_TRUST_CERTIFICATE");
            case ROUTER -> List.of("SHARD_TRUST_CERTIFICATE");
            case ADMIN -> List.of();
        };
        for (String setting : old) {
            if (m.env(c, s.envPrefix + setting).isPresent()) {
                problems.add(where + ": sets " + s.envPrefix + setting + ", server-only TLS on an internal hop:"
                        + " use mtls-certificate/key/ca");
            }
        }
        if (s == Service.ADMIN && args(c).contains("--shard-trust-certificate")) {
            problems.add(where + ": passes --shard-trust-certificate, server-only TLS to shard nodes: use"
                    + " --tls-cert/--tls-key/--tls-ca");
        }
        return problems;
    }

    /**
     * Every lastunit container, Jobs included, authenticates to ZooKeeper: its credentials variable
     * comes from a Secret's key, the same one for every process (one user owns the tree's ACLs).
     */
    static List<String> zookeeperCredentials(Manifests m) {
        List<String> problems = new ArrayList<>();
        Set<String> sources = new TreeSet<>();
        for (Map<String, Object> w : m.workloads()) {
            for (Map<String, Object> c : allContainers(w)) {
                Optional<Service> s = Service.of(c);
                if (s.isEmpty()) {
                    continue;
                }
                String var = s.get().zookeeperCredentialsEnv();
                Optional<String> value = m.env(c, var);
                String where = id(w) + " container " + c.get("name");
                if (value.isEmpty() || !value.get().startsWith("<secret ")) {
                    problems.add(where + ": " + var + " is " + value.orElse("unset") + ", not a Secret's key: its"
                            + " ZooKeeper session has no credentials and the ACLs refuse it");
                } else {
                    sources.add(value.get());
                }
                if (args(c).contains("--zookeeper-credentials")) {
                    problems.add(where + ": --zookeeper-credentials in its arguments puts the password in the pod spec");
                }
            }
        }
        if (sources.size() > 1) {
            problems.add("ZooKeeper credentials from " + sources + ": every process needs the same ones");
        }
        return problems;
    }

    // ---- production: TLS to ZooKeeper

    static final String NETTY_SERVER = "org.apache.zookeeper.server.NettyServerCnxnFactory";
    /** The files of a cert-manager Secret (CombinedPEM adds tls-combined.pem, the key followed by the chain). */
    static final String COMBINED_PEM = "tls-combined.pem";
    /** admin's subcommands: its own options (--zookeeper-tls-*) come before the first of them. */
    static final Set<String> ADMIN_SUBCOMMANDS = Set.of("cells", "tenants", "moves", "check", "topology", "serve",
            "acls");

    /**
     * ZooKeeper serves its clients TLS only: a secure client port its container opens, with
     * Netty, a PEM key store that is a Certificate's combined key and chain and the CA of that
     * Secret as trust, client certificates required (ssl.clientAuth=need); TLS between its nodes
     * (sslQuorum) with the same files; its plaintext client port, if any, on the loopback only;
     * its Certificate names every host of the connect string. Every lastunit process, Jobs
     * included, dials the secure port and gives the three zookeeper-tls settings as the tls.crt,
     * tls.key and ca.crt of a mounted Certificate's Secret with client auth from ZooKeeper's
     * issuer (the admin tool: options of admin, before its subcommand).
     */
    static List<String> zookeeperTls(Manifests m) {
        List<String> problems = new ArrayList<>();
        Map<String, Map<String, Object>> bySecret = new java.util.HashMap<>();
        m.kind("Certificate").forEach(c -> bySecret.put(str(at(c, "spec", "secretName")), c));
        Map<String, Object> zk = m.workload("zookeeper");
        Map<String, Object> zkc = map(list(podSpec(zk).get("containers"), "containers").get(0), "container");
        String where = id(zk) + " zoo.cfg";
        Properties cfg = zooCfg(m);
        String secure = cfg.getProperty("secureClientPort");
        if (secure == null) {
            problems.add(where + ": no secureClientPort: ZooKeeper serves its clients no TLS");
        } else if (!hasContainerPort(zkc, zookeeperClientPort(cfg))) {
            problems.add(id(zk) + ": no container port " + secure + " for its secureClientPort");
        }
        if (!NETTY_SERVER.equals(cfg.getProperty("serverCnxnFactory"))) {
            problems.add(where + ": serverCnxnFactory is " + cfg.getProperty("serverCnxnFactory") + ", not "
                    + NETTY_SERVER + " (the secure client port needs Netty)");
        }
        if (!"need".equals(cfg.getProperty("ssl.clientAuth"))) {
            problems.add(where + ": ssl.clientAuth is " + cfg.getProperty("ssl.clientAuth") + ", not need: a client"
                    + " without a certificate of the internal CA would get a session");
        }
        if (!"true".equals(cfg.getProperty("sslQuorum"))) {
            problems.add(where + ": sslQuorum is not true: the nodes' own traffic is plaintext");
        }
        Map<String, Object> zkCert = null;
        for (String prefix : List.of("ssl.", "ssl.quorum.")) {
            Optional<Map<String, Object>> keyStore = zooKeeperStore(zk, zkc, cfg, prefix + "keyStore", COMBINED_PEM,
                    bySecret, problems);
            zooKeeperStore(zk, zkc, cfg, prefix + "trustStore", "ca.crt", bySecret, problems);
            if (keyStore.isPresent()) {
                zkCert = keyStore.get();
            }
        }
        String plain = cfg.getProperty("clientPort");
        String plainAddress = cfg.getProperty("clientPortAddress", "");
        if (plain != null && !Set.of("127.0.0.1", "localhost", "::1").contains(plainAddress.trim())) {
            problems.add(where + ": the plaintext clientPort " + plain + " listens on "
                    + (plainAddress.isBlank() ? "every address" : plainAddress) + ": keep it to the loopback"
                    + " (clientPortAddress=127.0.0.1) or remove it");
        }
        Map<String, Object> zkIssuer = zkCert == null ? null : map(at(zkCert, "spec", "issuerRef"), "issuerRef");
        if (zkCert != null) {
            List<String> usages = strings(at(zkCert, "spec", "usages"));
            if (!usages.contains("server auth") || !usages.contains("client auth")) {
                problems.add(id(zkCert) + ": usages " + usages + " lack server auth or client auth (it serves clients"
                        + " and peers, and dials peers)");
            }
        }
        Set<String> hosts = new TreeSet<>();
        for (Map<String, Object> w : m.workloads()) {
            for (Map<String, Object> c : allContainers(w)) {
                Optional<Service> s = Service.of(c);
                if (s.isPresent()) {
                    problems.addAll(zookeeperTlsClient(m, w, c, s.get(), secure, zkIssuer, bySecret, hosts));
                }
            }
        }
        if (zkCert != null) {
            List<String> dnsNames = strings(at(zkCert, "spec", "dnsNames"));
            for (String host : hosts) {
                if (!dnsNames.contains(host)) {
                    problems.add(id(zkCert) + ": lacks " + host + ", a host of the connect string: the clients'"
                            + " hostname check would refuse ZooKeeper");
                }
            }
        }
        return problems;
    }

    /** A key or trust store of zoo.cfg: PEM, and the file {@code file} of a mounted Certificate's Secret; that Certificate. */
    private static Optional<Map<String, Object>> zooKeeperStore(Map<String, Object> zk, Map<String, Object> zkc,
            Properties cfg, String store, String file,
            Map<String, Map<String, Object>> bySecret, List<String> problems) {
        String where = id(zk) + " zoo.cfg";
        if (!"PEM".equals(cfg.getProperty(store + ".type"))) {
            problems.add(where + ": " + store + ".type is " + cfg.getProperty(store + ".type") + ", not PEM");
        }
        String location = cfg.getProperty(store + ".location");
        Optional<String[]> mounted = mountedSecretFile(zk, zkc, location);
        Map<String, Object> cert = mounted.map(f -> bySecret.get(f[0])).orElse(null);
        if (cert == null || !file.equals(mounted.get()[1])) {
            problems.add(where + ": " + store + ".location is " + location + ", not the " + file + " of a mounted"
                    + " Certificate's Secret");
            return Optional.empty();
        }
        boolean combined = at(cert, "spec", "additionalOutputFormats") instanceof List<?> formats
                && formats.stream().anyMatch(f -> "CombinedPEM".equals(at(f, "type")));
        if (COMBINED_PEM.equals(file) && !combined) {
            problems.add(id(cert) + ": no additionalOutputFormats CombinedPEM, so its Secret has no " + COMBINED_PEM
                    + " for " + store);
        }
        return Optional.of(cert);
    }

    private static List<String> zookeeperTlsClient(Manifests m, Map<String, Object> w, Map<String, Object> c,
            Service s, String securePort, Map<String, Object> zkIssuer, Map<String, Map<String, Object>> bySecret,
            Set<String> hosts) {
        List<String> problems = new ArrayList<>();
        String where = id(w) + " container " + c.get("name");
        String[][] files = {{"certificate", "cert", "tls.crt"}, {"key", "key", "tls.key"}, {"ca", "ca", "ca.crt"}};
        for (String[] f : files) {
            String setting = s == Service.ADMIN ? "--zookeeper-tls-" + f[1]
                    : s.envPrefix + "ZOOKEEPER_TLS_" + f[0].toUpperCase(java.util.Locale.ROOT);
            Optional<String> value = s == Service.ADMIN ? option(args(c), setting) : m.env(c, setting);
            Optional<String[]> mounted = value.flatMap(v -> mountedSecretFile(w, c, v));
            Map<String, Object> cert = mounted.map(x -> bySecret.get(x[0])).orElse(null);
            if (cert == null || !f[2].equals(mounted.get()[1])) {
                problems.add(where + ": " + setting + " is " + value.orElse("unset") + ", not the " + f[2] + " of a"
                        + " mounted Certificate's Secret: no TLS to ZooKeeper");
                continue;
            }
            if ("certificate".equals(f[0]) && !strings(at(cert, "spec", "usages")).contains("client auth")) {
                problems.add(where + ": its ZooKeeper client " + id(cert) + " lacks client auth");
            }
            if (zkIssuer != null && !zkIssuer.equals(at(cert, "spec", "issuerRef"))) {
                problems.add(where + ": " + setting + " is from " + id(cert) + " of issuer " + at(cert, "spec",
                        "issuerRef", "name") + ", not ZooKeeper's " + zkIssuer.get("name") + ": one would not trust"
                        + " the other");
            }
        }
        if (s == Service.ADMIN) {
            List<String> a = args(c);
            int sub = IntStream.range(1, a.size()).filter(i -> ADMIN_SUBCOMMANDS.contains(a.get(i))).findFirst()
                    .orElse(a.size());
            int opt = a.indexOf("--zookeeper-tls-cert");
            if (opt > sub) {
                problems.add(where + ": --zookeeper-tls-cert comes after " + a.get(sub) + ": it is an option of admin,"
                        + " before the subcommand");
            }
        }
        String connect = m.env(c, s.zookeeperEnv()).orElse("");
        for (String server : connect.split("/", 2)[0].split(",")) {
            int colon = server.lastIndexOf(':');
            String port = colon < 0 ? "" : server.substring(colon + 1);
            if (colon > 0) {
                hosts.add(server.substring(0, colon));
            }
            if (!port.equals(securePort)) {
                problems.add(where + ": " + s.zookeeperEnv() + " dials " + server + ", not ZooKeeper's secure client"
                        + " port " + securePort);
            }
        }
        return problems;
    }

    /** The Secret volumes of a workload: secret name to volume name. */
    private static Map<String, String> secretVolumes(Map<String, Object> w) {
        Map<String, String> out = new java.util.LinkedHashMap<>();
        for (Object v : list(podSpec(w).getOrDefault("volumes", List.of()), "volumes")) {
            Object secret = at(v, "secret", "secretName");
            if (secret != null) {
                out.put(secret.toString(), str(map(v, "volume").get("name")));
            }
        }
        return out;
    }

    /**
     * The Secret and key a file path of container {@code c} is, through a whole-volume mount of a
     * Secret volume: {@code [secretName, key]}; empty when the path is in no such mount.
     */
    static Optional<String[]> mountedSecretFile(Map<String, Object> w, Map<String, Object> c, String path) {
        if (path == null) {
            return Optional.empty();
        }
        Map<String, String> byVolume = new java.util.HashMap<>();
        secretVolumes(w).forEach((secret, volume) -> byVolume.put(volume, secret));
        for (Object vm : list(c.getOrDefault("volumeMounts", List.of()), "volumeMounts")) {
            Map<String, Object> mount = map(vm, "volumeMount");
            String dir = str(mount.get("mountPath"));
            String secret = byVolume.get(str(mount.get("name")));
            if (secret == null || mount.get("subPath") != null || dir == null) {
                continue;
            }
            String prefix = dir.endsWith("/") ? dir : dir + "/";
            if (path.startsWith(prefix) && !path.substring(prefix.length()).contains("/")) {
                return Optional.of(new String[] {secret, path.substring(prefix.length())});
            }
        }
        return Optional.empty();
    }

    /**
     * The routers read their grants from a file in a mounted Secret (tokens-file), which they read
     * again while running, and from nowhere else: the Secret volume is mounted whole (a subPath
     * mount never sees the Secret change), and no grants come from tokens or a config file.
     */
    static List<String> routerGrants(Manifests m) {
        List<String> problems = new ArrayList<>();
        Map<String, Object> w = m.workload("router");
        Map<String, Object> c = map(list(podSpec(w).get("containers"), "containers").get(0), "container");
        String where = id(w) + " container " + c.get("name");
        Optional<String> file = m.env(c, "LASTUNIT_ROUTER_TOKENS_FILE");
        for (String other : List.of("LASTUNIT_ROUTER_TOKENS", "MICRONAUT_CONFIG_FILES")) {
            if (m.env(c, other).isPresent()) {
                problems.add(where + ": sets " + other + ": its grants come from LASTUNIT_ROUTER_TOKENS_FILE alone");
            }
        }
        if (file.isEmpty()) {
            problems.add(where + ": LASTUNIT_ROUTER_TOKENS_FILE is unset: grants would change only with a restart");
            return problems;
        }
        Set<String> secretVolumes = new TreeSet<>();
        for (Object v : list(podSpec(w).getOrDefault("volumes", List.of()), "volumes")) {
            if (at(v, "secret", "secretName") != null) {
                secretVolumes.add(str(map(v, "volume").get("name")));
            }
        }
        boolean mounted = false;
        for (Object vm : list(c.getOrDefault("volumeMounts", List.of()), "volumeMounts")) {
            Map<String, Object> mount = map(vm, "volumeMount");
            String dir = str(mount.get("mountPath"));
            if (secretVolumes.contains(str(mount.get("name"))) && mount.get("subPath") == null
                    && file.get().startsWith(dir.endsWith("/") ? dir : dir + "/")) {
                mounted = true;
            }
        }
        if (!mounted) {
            problems.add(where + ": LASTUNIT_ROUTER_TOKENS_FILE " + file.get() + " is in no Secret volume mounted whole");
        }
        return problems;
    }

    private static List<String> strings(Object list) {
        return list instanceof List<?> l ? l.stream().map(String::valueOf).toList() : List.of();
    }

    private static Optional<Map<String, Object>> mountedCertificate(Map<String, Object> w, Map<String, Object> c,
            Map<String, Map<String, Object>> bySecret) {
        String volume = null;
        for (Object vm : list(c.getOrDefault("volumeMounts", List.of()), "volumeMounts")) {
            if (TLS_DIR.equals(map(vm, "volumeMount").get("mountPath"))) {
                volume = str(map(vm, "volumeMount").get("name"));
            }
        }
        for (Object v : list(podSpec(w).getOrDefault("volumes", List.of()), "volumes")) {
            Map<String, Object> vol = map(v, "volume");
            if (volume != null && volume.equals(vol.get("name"))) {
                return Optional.ofNullable(bySecret.get(str(at(vol, "secret", "secretName"))));
            }
        }
        return Optional.empty();
    }

    static Map<String, String> stringLabels(Map<String, Object> labels) {
        Map<String, String> out = new java.util.LinkedHashMap<>();
        labels.forEach((k, v) -> out.put(k, String.valueOf(v)));
        return out;
    }
}
