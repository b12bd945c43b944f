package io.lastunit.k8s;

import io.lastunit.testkit.TestTimeouts;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The objects one overlay renders to, as {@code kubectl kustomize} prints them, parsed into plain
 * maps and lists, with the look-ups the rules need. Rendered once per overlay and JVM. Immutable
 * after construction; its maps must not be changed by callers.
 *
 * <p>kubectl is required: without it the rendering cannot be checked, so its absence is a test
 * failure that says how to install it, never a skip.
 */
final class Manifests {
    /** The module's directory, where Maven runs the tests: k8s/. */
    static final Path K8S = Path.of("").toAbsolutePath();
    static final Path REPO = K8S.getParent();
    private static final Duration RENDER_WAIT = Duration.ofSeconds(60);
    private static final Map<String, Manifests> RENDERED = new ConcurrentHashMap<>();

    final String overlay;
    final List<Map<String, Object>> objects;

    private Manifests(String overlay, List<Map<String, Object>> objects) {
        this.overlay = overlay;
        this.objects = List.copyOf(objects);
    }

    /** The objects of {@code k8s/overlays/<overlay>}. */
    static Manifests of(String overlay) {
        return RENDERED.computeIfAbsent(overlay, o -> parse(o, render(K8S.resolve("overlays").resolve(o))));
    }

    static Manifests parse(String overlay, String yaml) {
        List<Map<String, Object>> objects = new ArrayList<>();
        for (Object doc : new Yaml(new SafeConstructor(new LoaderOptions())).loadAll(yaml)) {
            if (doc != null) {
                objects.add(map(doc, overlay + ": a rendered document"));
            }
        }
        return new Manifests(overlay, objects);
    }

    /** {@code kubectl kustomize dir}: the rendered YAML, or an AssertionError with kubectl's words. */
    static String render(Path dir) {
        String kubectl = kubectl();
        try {
            Path out = Files.createTempFile("lastunit-kustomize", ".yaml");
            Path err = Files.createTempFile("lastunit-kustomize", ".err");
            try {
                Process p = new ProcessBuilder(kubectl, "kustomize", dir.toString())
                        .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
                Duration wait = TestTimeouts.scaled(RENDER_WAIT);
                if (!p.waitFor(wait.toMillis(), TimeUnit.MILLISECONDS)) {
                    p.destroyForcibly();
                    throw new AssertionError("kubectl kustomize " + dir + " did not finish within " + wait);
                }
                if (p.exitValue() != 0) {
                    throw new AssertionError("kubectl kustomize " + dir + " failed (exit " + p.exitValue() + "):\n"
                            + Files.readString(err, StandardCharsets.UTF_8));
                }
                return Files.readString(out, StandardCharsets.UTF_8);
            } finally {
                Files.deleteIfExists(out);
                Files.deleteIfExists(err);
            }
        } catch (IOException e) {
            throw new AssertionError("could not run " + kubectl + " kustomize " + dir + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while rendering " + dir, e);
        }
    }

    /** The kubectl to run: $KUBECTL, else the first kubectl on the PATH. */
    static String kubectl() {
        String explicit = System.getenv("KUBECTL");
        if (explicit != null && !explicit.isBlank()) {
            return explicit;
        }
        String path = System.getenv().getOrDefault("PATH", "");
        for (String dir : path.split(File.pathSeparator)) {
            File f = new File(dir, "kubectl");
            if (!dir.isEmpty() && f.isFile() && f.canExecute()) {
                return f.getPath();
            }
        }
        throw new AssertionError("kubectl is not on the PATH (" + path + "), so the Kubernetes manifests cannot be"
                + " rendered and checked. Install kubectl with kustomize v5 (bash .ci/run installs it when absent),"
                + " or name one with KUBECTL=/path/to/kubectl.");
    }

    /**
     * A copy of these objects with {@code change} applied to it (a deep copy: this one stays as it
     * is), for showing that a rule catches a broken manifest.
     */
    Manifests with(java.util.function.Consumer<List<Map<String, Object>>> change) {
        Yaml yaml = new Yaml(new SafeConstructor(new LoaderOptions()));
        List<Map<String, Object>> copy = new ArrayList<>();
        for (Map<String, Object> o : objects) {
            copy.add(map(yaml.load(yaml.dump(o)), "copy"));
        }
        change.accept(copy);
        return new Manifests(overlay, copy);
    }

    // ---- look-ups

    List<Map<String, Object>> kind(String kind) {
        return objects.stream().filter(o -> kind.equals(o.get("kind"))).toList();
    }

    Optional<Map<String, Object>> find(String kind, String name) {
        return kind(kind).stream().filter(o -> name.equals(name(o))).findFirst();
    }

    Map<String, Object> get(String kind, String name) {
        return find(kind, name).orElseThrow(() -> new AssertionError(overlay + ": no " + kind + " " + name
                + " is rendered"));
    }

    /** The workloads that run pods: Deployments, StatefulSets, DaemonSets, Jobs, CronJobs. */
    List<Map<String, Object>> workloads() {
        return objects.stream().filter(o -> podSpec(o) != null).toList();
    }

    /** The workloads whose pod template has {@code app.kubernetes.io/component=component}. */
    List<Map<String, Object>> workloads(String component) {
        return workloads().stream().filter(w -> component.equals(templateLabels(w).get("app.kubernetes.io/component")))
                .toList();
    }

    Map<String, Object> workload(String component) {
        List<Map<String, Object>> found = workloads(component);
        if (found.size() != 1) {
            throw new AssertionError(overlay + ": expected one workload of component " + component + ", found "
                    + found.stream().map(Manifests::id).toList());
        }
        return found.get(0);
    }

    /** The value of a ConfigMap key as the overlay renders it (names carry kustomize's hash). */
    String configMapValue(String name, String key) {
        Map<String, Object> cm = get("ConfigMap", name);
        Object v = map(cm.getOrDefault("data", Map.of()), id(cm) + " data").get(key);
        if (v == null) {
            throw new AssertionError(overlay + ": ConfigMap " + name + " has no key " + key);
        }
        return v.toString();
    }

    /**
     * The value an environment variable of {@code container} has: its literal value (with
     * {@code $(VAR)} references left as they are), or the ConfigMap value it names; empty when the
     * variable is not set; {@code "<secret name/key>"} for a Secret's key and {@code "<field path>"}
     * for the downward API.
     */
    Optional<String> env(Map<String, Object> container, String name) {
        for (Object e : list(container.getOrDefault("env", List.of()), "env")) {
            Map<String, Object> var = map(e, "env entry");
            if (!name.equals(var.get("name"))) {
                continue;
            }
            if (var.containsKey("value")) {
                return Optional.of(String.valueOf(var.get("value")));
            }
            Map<String, Object> from = map(var.get("valueFrom"), "valueFrom of " + name);
            if (from.containsKey("configMapKeyRef")) {
                Map<String, Object> ref = map(from.get("configMapKeyRef"), "configMapKeyRef");
                return Optional.of(configMapValue(str(ref.get("name")), str(ref.get("key"))));
            }
            if (from.containsKey("secretKeyRef")) {
                Map<String, Object> ref = map(from.get("secretKeyRef"), "secretKeyRef");
                return Optional.of("<secret " + ref.get("name") + "/" + ref.get("key") + ">");
            }
            if (from.containsKey("fieldRef")) {
                return Optional.of("<" + map(from.get("fieldRef"), "fieldRef").get("fieldPath") + ">");
            }
            throw new AssertionError("env " + name + ": unknown valueFrom " + from);
        }
        return Optional.empty();
    }

    /** Where an env var of {@code container} comes from: the ConfigMap key it names, if any. */
    static Optional<String> configMapKeyOf(Map<String, Object> container, String name) {
        for (Object e : list(container.getOrDefault("env", List.of()), "env")) {
            Map<String, Object> var = map(e, "env entry");
            if (name.equals(var.get("name")) && var.get("valueFrom") instanceof Map<?, ?> from
                    && from.get("configMapKeyRef") instanceof Map<?, ?> ref) {
                return Optional.of(ref.get("key").toString());
            }
        }
        return Optional.empty();
    }

    // ---- generic structure

    static String name(Map<String, Object> o) {
        return str(map(o.get("metadata"), "metadata").get("name"));
    }

    static String id(Map<String, Object> o) {
        return o.get("kind") + " " + name(o);
    }

    static Map<String, Object> labels(Map<String, Object> o) {
        return map(map(o.get("metadata"), "metadata").getOrDefault("labels", Map.of()), "labels");
    }

    /** The pod spec of a workload, or null for an object that runs no pods. */
    static Map<String, Object> podSpec(Map<String, Object> o) {
        Map<String, Object> template = podTemplate(o);
        return template == null ? null : map(template.get("spec"), id(o) + " pod spec");
    }

    static Map<String, Object> podTemplate(Map<String, Object> o) {
        Object kind = o.get("kind");
        Map<String, Object> spec = o.get("spec") instanceof Map<?, ?> ? map(o.get("spec"), "spec") : Map.of();
        if ("CronJob".equals(kind)) {
            spec = map(map(spec.get("jobTemplate"), "jobTemplate").get("spec"), "jobTemplate spec");
            return map(spec.get("template"), "template");
        }
        if ("Deployment".equals(kind) || "StatefulSet".equals(kind) || "DaemonSet".equals(kind)
                || "Job".equals(kind) || "ReplicaSet".equals(kind)) {
            return map(spec.get("template"), id(o) + " template");
        }
        return null;
    }

    static Map<String, Object> templateLabels(Map<String, Object> o) {
        Map<String, Object> template = podTemplate(o);
        return map(map(template.getOrDefault("metadata", Map.of()), "template metadata").getOrDefault("labels", Map.of()),
                "template labels");
    }

    /** The containers and the init containers of a workload, each once. */
    static List<Map<String, Object>> allContainers(Map<String, Object> workload) {
        Map<String, Object> spec = podSpec(workload);
        List<Map<String, Object>> all = new ArrayList<>();
        for (String field : List.of("initContainers", "containers")) {
            for (Object c : list(spec.getOrDefault(field, List.of()), field)) {
                all.add(map(c, field));
            }
        }
        return all;
    }

    static Map<String, Object> container(Map<String, Object> workload, String name) {
        return allContainers(workload).stream().filter(c -> name.equals(c.get("name"))).findFirst()
                .orElseThrow(() -> new AssertionError(id(workload) + " has no container " + name));
    }

    /** The containerPort named {@code portName}, or empty. */
    static Optional<Integer> containerPort(Map<String, Object> container, String portName) {
        for (Object p : list(container.getOrDefault("ports", List.of()), "ports")) {
            Map<String, Object> port = map(p, "port");
            if (portName.equals(port.get("name"))) {
                return Optional.of(((Number) port.get("containerPort")).intValue());
            }
        }
        return Optional.empty();
    }

    static List<String> args(Map<String, Object> container) {
        return list(container.getOrDefault("args", List.of()), "args").stream().map(String::valueOf).toList();
    }

    /** The value after {@code option} in {@code args}, or empty. */
    static Optional<String> option(List<String> args, String option) {
        int i = args.indexOf(option);
        return i < 0 || i + 1 >= args.size() ? Optional.empty() : Optional.of(args.get(i + 1));
    }

    static int replicas(Map<String, Object> workload) {
        Object r = map(workload.get("spec"), "spec").get("replicas");
        return r == null ? 1 : ((Number) r).intValue();
    }

    /** True when every pair of {@code selector}'s matchLabels is among {@code labels} (matchExpressions: see callers). */
    static boolean matchLabels(Map<String, Object> selector, Map<String, Object> labels) {
        Map<String, Object> match = map(selector.getOrDefault("matchLabels", Map.of()), "matchLabels");
        return match.entrySet().stream().allMatch(e -> String.valueOf(e.getValue()).equals(
                labels.get(e.getKey()) == null ? null : String.valueOf(labels.get(e.getKey()))));
    }

    // ---- YAML values

    @SuppressWarnings("unchecked")
    static Map<String, Object> map(Object o, String what) {
        if (!(o instanceof Map<?, ?>)) {
            throw new AssertionError(what + " is not a mapping: " + o);
        }
        return (Map<String, Object>) o;
    }

    @SuppressWarnings("unchecked")
    static List<Object> list(Object o, String what) {
        if (!(o instanceof List<?>)) {
            throw new AssertionError(what + " is not a list: " + o);
        }
        return (List<Object>) o;
    }

    static String str(Object o) {
        return o == null ? null : o.toString();
    }

    /** The node at {@code path} (map keys) under {@code o}, or null where a step is missing. */
    static Object at(Object o, String... path) {
        Object node = o;
        for (String key : path) {
            if (!(node instanceof Map<?, ?> m)) {
                return null;
            }
            node = m.get(key);
        }
        return node;
    }

    /** The defaults of a service's application.yml, flattened: {@code lastunit.shard.port -> 7443}. */
    static Map<String, Object> applicationDefaults(String module) {
        Path yml = REPO.resolve(module).resolve("src/main/resources/application.yml");
        try {
            Object doc = new Yaml(new SafeConstructor(new LoaderOptions())).load(Files.readString(yml));
            Map<String, Object> flat = new LinkedHashMap<>();
            flatten("", doc, flat);
            return flat;
        } catch (IOException e) {
            throw new AssertionError("cannot read " + yml + ": " + e.getMessage(), e);
        }
    }

    private static void flatten(String prefix, Object node, Map<String, Object> into) {
        if (node instanceof Map<?, ?> m) {
            m.forEach((k, v) -> flatten(prefix.isEmpty() ? k.toString() : prefix + "." + k, v, into));
        } else {
            into.put(prefix, node);
        }
    }

    static <T> List<T> filter(List<T> items, Predicate<T> p) {
        return items.stream().filter(p).toList();
    }
}
