package io.lastunit.k8s;

import static io.lastunit.k8s.Manifests.at;
import static io.lastunit.k8s.Manifests.list;
import static io.lastunit.k8s.Manifests.map;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Kubernetes' NetworkPolicy ingress semantics, evaluated over the pods an overlay would run (one
 * per Deployment or Job, one per StatefulSet replica with its pod-name label, one per
 * CloudNativePG instance with the operator's labels) and a few stand-ins: an unlabelled pod of
 * the same namespace, and pods of other namespaces. Answers "may this pod reach that port of that
 * pod", as the network plugin would: a pod no policy selects takes everything; a selected pod
 * takes what one of its policies' rules allows. Pure: no I/O, immutable.
 */
final class NetworkPolicies {
    /** A pod: where it runs and its labels. */
    record Pod(String name, Map<String, String> namespaceLabels, Map<String, String> labels) {
        String namespace() {
            return namespaceLabels.get("kubernetes.io/metadata.name");
        }
    }

    private final String namespace;
    private final List<Map<String, Object>> policies;
    final List<Pod> pods;

    NetworkPolicies(Manifests m) {
        this.policies = m.kind("NetworkPolicy");
        String ns = null;
        for (Map<String, Object> o : m.objects) {
            Object n = at(o, "metadata", "namespace");
            if (n != null) {
                ns = n.toString();
                break;
            }
        }
        this.namespace = ns;
        this.pods = List.copyOf(pods(m));
    }

    Pod inNamespace(String name, Map<String, String> labels) {
        return new Pod(name, Map.of("kubernetes.io/metadata.name", namespace), labels);
    }

    static Pod elsewhere(String namespace) {
        return new Pod("a pod in " + namespace, Map.of("kubernetes.io/metadata.name", namespace), Map.of());
    }

    private List<Pod> pods(Manifests m) {
        List<Pod> out = new ArrayList<>();
        for (Map<String, Object> w : m.workloads()) {
            Map<String, String> labels = strings(Manifests.templateLabels(w));
            String name = Manifests.name(w);
            if ("StatefulSet".equals(w.get("kind"))) {
                for (int i = 0; i < Manifests.replicas(w); i++) {
                    Map<String, String> l = new LinkedHashMap<>(labels);
                    l.put("statefulset.kubernetes.io/pod-name", name + "-" + i);
                    l.put("apps.kubernetes.io/pod-index", String.valueOf(i));
                    out.add(inNamespace(name + "-" + i, l));
                }
            } else {
                out.add(inNamespace(name, labels));
            }
        }
        for (Map<String, Object> c : m.kind("Cluster")) {
            String cluster = Manifests.name(c);
            Object inherited = at(c, "spec", "inheritedMetadata", "labels");
            int instances = ((Number) map(c.get("spec"), "spec").getOrDefault("instances", 1)).intValue();
            for (int i = 1; i <= instances; i++) {
                Map<String, String> l = new LinkedHashMap<>(inherited == null ? Map.of() : strings(map(inherited, "labels")));
                l.put("cnpg.io/cluster", cluster);
                l.put("cnpg.io/podRole", "instance");
                out.add(inNamespace(cluster + "-" + i, l));
            }
        }
        return out;
    }

    /** The pods with {@code label=value}. */
    List<Pod> podsWith(String label, String value) {
        return pods.stream().filter(p -> value.equals(p.labels().get(label))).toList();
    }

    /** True when {@code source} may open a connection to TCP {@code port} of {@code target}. */
    boolean allows(Pod source, Pod target, int port) {
        boolean selected = false;
        for (Map<String, Object> policy : policies) {
            Map<String, Object> spec = map(policy.get("spec"), "NetworkPolicy spec");
            if (!selects(map(spec.getOrDefault("podSelector", Map.of()), "podSelector"), target.labels())
                    || !appliesToIngress(spec)) {
                continue;
            }
            selected = true;
            for (Object r : list(spec.getOrDefault("ingress", List.of()), "ingress")) {
                Map<String, Object> rule = map(r, "ingress rule");
                if (portMatches(rule, port) && peerMatches(rule, source)) {
                    return true;
                }
            }
        }
        return !selected;
    }

    private static boolean appliesToIngress(Map<String, Object> spec) {
        Object types = spec.get("policyTypes");
        return types == null || list(types, "policyTypes").contains("Ingress");
    }

    private static boolean portMatches(Map<String, Object> rule, int port) {
        Object ports = rule.get("ports");
        if (ports == null || list(ports, "ports").isEmpty()) {
            return true;
        }
        for (Object p : list(ports, "ports")) {
            Map<String, Object> entry = map(p, "port");
            Object protocol = entry.getOrDefault("protocol", "TCP");
            Object number = entry.get("port");
            if ("TCP".equals(protocol) && (number == null || number instanceof Number n && n.intValue() == port)) {
                return true;
            }
        }
        return false;
    }

    private boolean peerMatches(Map<String, Object> rule, Pod source) {
        Object from = rule.get("from");
        if (from == null || list(from, "from").isEmpty()) {
            return true;
        }
        for (Object f : list(from, "from")) {
            Map<String, Object> peer = map(f, "peer");
            if (peer.containsKey("ipBlock")) {
                continue; // addresses outside the cluster; no pod here is one
            }
            Object podSelector = peer.get("podSelector");
            Object nsSelector = peer.get("namespaceSelector");
            boolean nsOk = nsSelector == null ? namespace.equals(source.namespace())
                    : selects(map(nsSelector, "namespaceSelector"), source.namespaceLabels());
            boolean podOk = podSelector == null || selects(map(podSelector, "podSelector"), source.labels());
            if (nsOk && podOk) {
                return true;
            }
        }
        return false;
    }

    /** A label selector: matchLabels and matchExpressions (In, NotIn, Exists, DoesNotExist); {} selects all. */
    static boolean selects(Map<String, Object> selector, Map<String, String> labels) {
        for (var e : map(selector.getOrDefault("matchLabels", Map.of()), "matchLabels").entrySet()) {
            if (!String.valueOf(e.getValue()).equals(labels.get(e.getKey()))) {
                return false;
            }
        }
        for (Object x : list(selector.getOrDefault("matchExpressions", List.of()), "matchExpressions")) {
            Map<String, Object> expr = map(x, "matchExpression");
            String key = String.valueOf(expr.get("key"));
            List<String> values = list(expr.getOrDefault("values", List.of()), "values").stream().map(String::valueOf)
                    .toList();
            String value = labels.get(key);
            boolean ok = switch (String.valueOf(expr.get("operator"))) {
                case "In" -> value != null && values.contains(value);
                case "NotIn" -> value == null || !values.contains(value);
                case "Exists" -> value != null;
                case "DoesNotExist" -> value == null;
                default -> throw new AssertionError("unknown selector operator in " + expr);
            };
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    private static Map<String, String> strings(Map<String, Object> m) {
        Map<String, String> out = new LinkedHashMap<>();
        m.forEach((k, v) -> out.put(k, String.valueOf(v)));
        return out;
    }
}
