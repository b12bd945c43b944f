package io.lastunit.k8s;

import static io.lastunit.k8s.Manifests.at;
import static io.lastunit.k8s.Manifests.list;
import static io.lastunit.k8s.Manifests.map;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * Each rule of {@link DeployRules} fails on a rendered overlay broken in the way it guards
 * against, naming what is wrong, so a green {@link K8sManifestsTest} means the rules looked.
 */
class DeployRulesTest {
    private static final Manifests PROD = Manifests.of("prod");

    private static List<String> broken(Function<Manifests, List<String>> rule, Consumer<List<Map<String, Object>>> change) {
        assertThat(rule.apply(PROD)).as("the rule passes on the real overlay").isEmpty();
        return rule.apply(PROD.with(change));
    }

    private static Map<String, Object> object(List<Map<String, Object>> objects, String kind, String name) {
        return objects.stream().filter(o -> kind.equals(o.get("kind")) && name.equals(Manifests.name(o))).findFirst()
                .orElseThrow();
    }

    private static Map<String, Object> container(List<Map<String, Object>> objects, String kind, String name) {
        return map(list(Manifests.podSpec(object(objects, kind, name)).get("containers"), "containers").get(0), "c");
    }

    private static List<Object> env(Map<String, Object> container) {
        return list(container.get("env"), "env");
    }

    private static void setEnv(Map<String, Object> container, String name, String value) {
        env(container).removeIf(e -> name.equals(map(e, "e").get("name")));
        if (value != null) {
            env(container).add(new java.util.LinkedHashMap<>(Map.of("name", name, "value", value)));
        }
    }

    @Test
    void containers_catchATagInsteadOfADigest_aMissingLimit_andRoot() {
        List<String> problems = broken(DeployRules::containers, o -> {
            container(o, "Deployment", "lastunit-router").put("image", "ghcr.io/lastunit/lastunit-router:latest");
            map(map(container(o, "StatefulSet", "lastunit-shard").get("resources"), "r").get("limits"), "l")
                    .remove("memory");
            map(Manifests.podSpec(object(o, "StatefulSet", "lastunit-balancer")).get("securityContext"), "s")
                    .put("runAsUser", 0);
        });
        assertThat(String.join("\n", problems)).contains(
                "Deployment lastunit-router container router: image ghcr.io/lastunit/lastunit-router:latest is not pinned",
                "StatefulSet lastunit-shard container shard-node: resources.limits.memory is not set",
                "StatefulSet lastunit-balancer container bucket-balancer: runAsUser is 0, not 65532");
    }

    @Test
    void probes_catchAMissingProbe_andALivenessThatAsksTheReadiness() {
        List<String> problems = broken(DeployRules::probes, o -> {
            container(o, "StatefulSet", "lastunit-zookeeper").remove("readinessProbe");
            map(at(container(o, "Deployment", "lastunit-router"), "livenessProbe", "grpc"), "g").remove("service");
        });
        assertThat(String.join("\n", problems)).contains(
                "StatefulSet lastunit-zookeeper container zookeeper: no readinessProbe",
                "Deployment lastunit-router container router: livenessProbe asks health service '', not 'liveness'");
    }

    @Test
    void ports_catchAPortTheSettingDoesNotOpen_aMissingConnectionAge_andAWrongAdvertisedName() {
        List<String> problems = broken(DeployRules::ports, o -> {
            setEnv(container(o, "StatefulSet", "lastunit-shard"), "LASTUNIT_SHARD_HEALTH_PORT", "7445");
            setEnv(container(o, "Deployment", "lastunit-router"), "LASTUNIT_ROUTER_MAX_CONNECTION_AGE_MS", null);
            setEnv(container(o, "StatefulSet", "lastunit-balancer"), "LASTUNIT_BALANCER_ADVERTISED_ADDRESS",
                    "$(POD_NAME).lastunit-balancers:7500");
        });
        assertThat(String.join("\n", problems)).contains(
                "container port health=7444 but its setting health-port is 7445",
                "max-connection-age-ms is not set",
                "LASTUNIT_BALANCER_ADVERTISED_ADDRESS is $(POD_NAME).lastunit-balancers:7500, not"
                        + " $(POD_NAME).lastunit-balancer:7500");
    }

    @Test
    void ports_catchAGrpcPortThatIsNotTheApplicationDefault() {
        List<String> problems = broken(DeployRules::ports, o -> {
            for (Object p : list(container(o, "Deployment", "lastunit-router").get("ports"), "ports")) {
                if ("grpc".equals(map(p, "p").get("name"))) {
                    map(p, "p").put("containerPort", 7399);
                }
            }
        });
        assertThat(String.join("\n", problems)).contains("container port grpc=7399 but its setting port is 7400");
    }

    @Test
    void zookeeper_catchesAConnectStringWithoutANode() {
        List<String> problems = broken(DeployRules::zookeeper, o -> {
            for (Map<String, Object> cm : o) {
                if ("ConfigMap".equals(cm.get("kind")) && Manifests.name(cm).startsWith("lastunit-platform")) {
                    Map<String, Object> data = map(cm.get("data"), "data");
                    data.put("ZOOKEEPER", data.get("ZOOKEEPER").toString().replaceFirst(",[^,]*$", ""));
                }
            }
        });
        assertThat(String.join("\n", problems)).contains("LASTUNIT_SHARD_ZOOKEEPER is", "not the ensemble");
    }

    @Test
    void shards_catchAShardWithoutADatabase_andABootstrapThatIsNotIdempotent() {
        List<String> problems = broken(DeployRules::shards, o -> {
            map(object(o, "StatefulSet", "lastunit-shard").get("spec"), "spec").put("replicas", 3);
            list(container(o, "Job", "lastunit-bootstrap").get("args"), "args").remove("--exists-ok");
        });
        assertThat(String.join("\n", problems)).contains(
                "CloudNativePG clusters [lastunit-shard-0-db, lastunit-shard-1-db] are not one per shard",
                "cells create without --exists-ok",
                "lastunit-shard-2=$(REGION)=lastunit-shard-2.lastunit-shard:7443");
    }

    @Test
    void disruptionBudgets_catchAWorkloadWithoutOne() {
        List<String> problems = broken(DeployRules::disruptionBudgets,
                o -> o.remove(object(o, "PodDisruptionBudget", "lastunit-balancer")));
        assertThat(problems).contains("StatefulSet lastunit-balancer: selected by 0 PodDisruptionBudgets, not 1");
    }

    @Test
    void networkPolicies_catchAShardOpenToAll_andADatabaseOpenToAnotherShard() {
        List<String> problems = broken(DeployRules::networkPolicies, o -> {
            list(at(object(o, "NetworkPolicy", "lastunit-shard"), "spec", "ingress"), "ingress")
                    .add(new java.util.LinkedHashMap<>(Map.of("ports", List.of(Map.of("port", 7443)))));
            Map<String, Object> rule = map(list(at(object(o, "NetworkPolicy", "lastunit-shard-0-db"), "spec", "ingress"),
                    "ingress").get(0), "rule");
            rule.put("from", List.of(Map.of("podSelector", Map.of("matchLabels",
                    Map.of("app.kubernetes.io/component", "shard-node")))));
        });
        String all = String.join("\n", problems);
        assertThat(all).contains("lastunit-zookeeper-0 can reach shard node lastunit-shard-0:7443",
                "a pod in somewhere-else can reach shard node lastunit-shard-1:7443",
                "lastunit-shard-1 can reach database lastunit-shard-0-db-1:5432");
        assertThat(all).doesNotContain("lastunit-shard-0 cannot reach database lastunit-shard-0-db");
    }

    @Test
    void networkPolicies_catchZooKeeperOpenToAnyPod() {
        List<String> problems = broken(DeployRules::networkPolicies, o -> map(list(at(object(o, "NetworkPolicy",
                "lastunit-zookeeper"), "spec", "ingress"), "ingress").get(0), "rule").remove("from"));
        assertThat(String.join("\n", problems)).contains("an unlabelled pod can reach ZooKeeper lastunit-zookeeper-0:2281",
                "lastunit-shard-0-db-1 can reach ZooKeeper");
    }

    @Test
    void productionDatabases_catchAsynchronousFallback_tooFewInstances_andNoScheduledBackup() {
        List<String> problems = broken(DeployRules::productionDatabases, o -> {
            Map<String, Object> spec = map(object(o, "Cluster", "lastunit-shard-1-db").get("spec"), "spec");
            spec.put("instances", 2);
            map(at(spec, "postgresql", "synchronous"), "sync").put("dataDurability", "preferred");
            o.remove(object(o, "ScheduledBackup", "lastunit-shard-1-db-nightly"));
        });
        assertThat(problems).contains("Cluster lastunit-shard-1-db: instances 2, fewer than 3",
                "Cluster lastunit-shard-1-db: postgresql.synchronous.dataDurability is preferred, not required",
                "Cluster lastunit-shard-1-db: no ScheduledBackup of it by its backup method");
    }

    @Test
    void productionTls_catchesAShardNameMissing_anIdentityOfTheWrongRole_andAMissingMtlsFile() {
        List<String> problems = broken(DeployRules::productionTls, o -> {
            Map<String, Object> spec = map(object(o, "Certificate", "lastunit-shard-node").get("spec"), "spec");
            list(spec.get("dnsNames"), "dnsNames").remove("lastunit-shard-1.lastunit-shard");
            spec.put("uris", List.of("spiffe://lastunit/router/lastunit-shard"));
            setEnv(container(o, "StatefulSet", "lastunit-balancer"), "LASTUNIT_BALANCER_MTLS_CA", null);
            List<Object> args = list(container(o, "Deployment", "lastunit-admin").get("args"), "args");
            args.set(args.indexOf("--tls-key") + 1, "/etc/lastunit/tls/ca.crt");
            setEnv(container(o, "Deployment", "lastunit-router"), "LASTUNIT_ROUTER_TLS_KEY", null);
        });
        assertThat(problems).contains(
                "Certificate lastunit-shard-node: lacks lastunit-shard-1.lastunit-shard, the address peers dial"
                        + " StatefulSet lastunit-shard at",
                "StatefulSet lastunit-shard container shard-node: its Certificate lastunit-shard-node names"
                        + " [spiffe://lastunit/router/lastunit-shard], not one identity of role shard"
                        + " (spiffe://lastunit/shard/<name>): its peers' allow-lists would refuse it",
                "StatefulSet lastunit-balancer container bucket-balancer: LASTUNIT_BALANCER_MTLS_CA is unset, not"
                        + " /etc/lastunit/tls/ca.crt: no mutual TLS on its internal hops",
                "Deployment lastunit-admin container admin: --tls-key is /etc/lastunit/tls/ca.crt, not"
                        + " /etc/lastunit/tls/tls.key: no mutual TLS on its internal hops",
                "Deployment lastunit-router container router: LASTUNIT_ROUTER_TLS_KEY is not /etc/lastunit/tls/tls.key:"
                        + " its public listener is plaintext");
    }

    @Test
    void productionTls_catchesServerOnlySettingsOnInternalHops() {
        List<String> problems = broken(DeployRules::productionTls, o -> {
            setEnv(container(o, "StatefulSet", "lastunit-shard"), "LASTUNIT_SHARD_TLS_CERTIFICATE",
                    "/etc/lastunit/tls/tls.crt");
            setEnv(container(o, "Deployment", "lastunit-router"), "LASTUNIT_ROUTER_SHARD_TRUST_CERTIFICATE",
                    "/etc/lastunit/tls/ca.crt");
            setEnv(container(o, "StatefulSet", "lastunit-balancer"), "LASTUNIT_BALANCER_TLS_KEY",
                    "/etc/lastunit/tls/tls.key");
            List<Object> args = list(container(o, "Job", "lastunit-bootstrap").get("args"), "args");
            args.addAll(1, List.of("--shard-trust-certificate", "/etc/lastunit/tls/ca.crt"));
        });
        assertThat(problems).contains(
                "StatefulSet lastunit-shard container shard-node: sets LASTUNIT_SHARD_TLS_CERTIFICATE, server-only TLS"
                        + " on an internal hop: use mtls-certificate/key/ca",
                "Deployment lastunit-router container router: sets LASTUNIT_ROUTER_SHARD_TRUST_CERTIFICATE, server-only"
                        + " TLS on an internal hop: use mtls-certificate/key/ca",
                "StatefulSet lastunit-balancer container bucket-balancer: sets LASTUNIT_BALANCER_TLS_KEY, server-only"
                        + " TLS on an internal hop: use mtls-certificate/key/ca",
                "Job lastunit-bootstrap container cells: passes --shard-trust-certificate, server-only TLS to shard"
                        + " nodes: use --tls-cert/--tls-key/--tls-ca");
    }

    @Test
    void productionTls_catchesACertificateWithoutClientAuthOrIdentity_andASecretNoCertificateIssues() {
        List<String> problems = broken(DeployRules::productionTls, o -> {
            Map<String, Object> balancer = map(object(o, "Certificate", "lastunit-balancer").get("spec"), "spec");
            balancer.put("usages", List.of("server auth"));
            balancer.remove("uris");
            for (Object v : list(Manifests.podSpec(object(o, "Deployment", "lastunit-router")).get("volumes"), "v")) {
                if ("tls".equals(map(v, "v").get("name"))) {
                    map(map(v, "v").get("secret"), "secret").put("secretName", "lastunit-router-server-tls");
                }
            }
        });
        assertThat(problems).contains(
                "Certificate lastunit-balancer: usages [server auth] lack server auth or client auth: the same"
                        + " certificate serves the listener and dials the others",
                "Certificate lastunit-balancer: uris [] are not exactly one identity spiffe://lastunit/<role>/<name>",
                "StatefulSet lastunit-balancer container bucket-balancer: its Certificate lastunit-balancer names [],"
                        + " not one identity of role balancer (spiffe://lastunit/balancer/<name>): its peers'"
                        + " allow-lists would refuse it",
                "Deployment lastunit-router container router: no Certificate's Secret is mounted at /etc/lastunit/tls");
    }

    @Test
    void productionTls_wantsAnOperatorsAdminCertificate_forClientAuthOnly() {
        List<String> served = broken(DeployRules::productionTls, o -> map(object(o, "Certificate",
                "lastunit-operator").get("spec"), "spec").put("usages", List.of("server auth", "client auth")));
        assertThat(served).containsExactly("Certificate lastunit-operator: mounted by no workload (a caller's), but"
                + " usages [server auth, client auth] are not client auth without server auth");
        List<String> none = broken(DeployRules::productionTls, o -> o.remove(object(o, "Certificate",
                "lastunit-operator")));
        assertThat(none).containsExactly("no Certificate of an admin identity for operators' tool pods (mounted by no"
                + " workload): the pods labelled lastunit.io/admin-client=true that the NetworkPolicy lastunit-admin"
                + " admits would have no certificate the admin server takes");
    }

    @Test
    void zookeeperCredentials_catchAJobWithout_aLiteralPassword_andTwoSecrets() {
        List<String> problems = broken(DeployRules::zookeeperCredentials, o -> {
            setEnv(container(o, "Job", "lastunit-bootstrap"), "LASTUNIT_ZOOKEEPER_CREDENTIALS", null);
            setEnv(container(o, "Deployment", "lastunit-router"), "LASTUNIT_ROUTER_ZOOKEEPER_CREDENTIALS",
                    "lastunit:in-the-manifest");
            for (Object e : env(container(o, "StatefulSet", "lastunit-balancer"))) {
                Object ref = at(e, "valueFrom", "secretKeyRef");
                if (ref != null && "LASTUNIT_BALANCER_ZOOKEEPER_CREDENTIALS".equals(map(e, "e").get("name"))) {
                    map(ref, "ref").put("name", "lastunit-balancer-zookeeper");
                }
            }
        });
        assertThat(problems).contains(
                "Job lastunit-bootstrap container cells: LASTUNIT_ZOOKEEPER_CREDENTIALS is unset, not a Secret's key:"
                        + " its ZooKeeper session has no credentials and the ACLs refuse it",
                "Deployment lastunit-router container router: LASTUNIT_ROUTER_ZOOKEEPER_CREDENTIALS is"
                        + " lastunit:in-the-manifest, not a Secret's key: its ZooKeeper session has no credentials and"
                        + " the ACLs refuse it",
                "ZooKeeper credentials from [<secret lastunit-balancer-zookeeper/credentials>,"
                        + " <secret lastunit-zookeeper-credentials/credentials>]: every process needs the same ones");
    }

    private static void editZooCfg(List<Map<String, Object>> objects, java.util.function.UnaryOperator<String> edit) {
        Map<String, Object> data = map(object(objects, "ConfigMap", "lastunit-zookeeper").get("data"), "data");
        String before = data.get("zoo.cfg").toString();
        String after = edit.apply(before);
        assertThat(after).as("the edit changes zoo.cfg").isNotEqualTo(before);
        data.put("zoo.cfg", after);
    }

    @Test
    void zookeeperTls_catchesOptionalClientCertificates_plaintextOnEveryAddress_andAKeyStoreWithoutTheChain() {
        List<String> problems = broken(DeployRules::zookeeperTls, o -> {
            editZooCfg(o, cfg -> cfg.replace("ssl.clientAuth=need", "ssl.clientAuth=want")
                    .replace("clientPortAddress=127.0.0.1\n", "")
                    .replace("ssl.quorum.keyStore.location=/etc/zookeeper/tls/tls-combined.pem",
                            "ssl.quorum.keyStore.location=/etc/zookeeper/tls/tls.key"));
            map(object(o, "Certificate", "lastunit-zookeeper").get("spec"), "spec").remove("additionalOutputFormats");
        });
        assertThat(problems).contains(
                "StatefulSet lastunit-zookeeper zoo.cfg: ssl.clientAuth is want, not need: a client without a"
                        + " certificate of the internal CA would get a session",
                "StatefulSet lastunit-zookeeper zoo.cfg: the plaintext clientPort 2181 listens on every address: keep it"
                        + " to the loopback (clientPortAddress=127.0.0.1) or remove it",
                "StatefulSet lastunit-zookeeper zoo.cfg: ssl.quorum.keyStore.location is /etc/zookeeper/tls/tls.key, not"
                        + " the tls-combined.pem of a mounted Certificate's Secret",
                "Certificate lastunit-zookeeper: no additionalOutputFormats CombinedPEM, so its Secret has no"
                        + " tls-combined.pem for ssl.keyStore");
    }

    @Test
    void zookeeperTls_catchesAnEnsembleWithoutASecureClientPort() {
        List<String> problems = broken(DeployRules::zookeeperTls,
                o -> editZooCfg(o, cfg -> cfg.replace("secureClientPort=2281\n", "")));
        assertThat(problems).contains(
                "StatefulSet lastunit-zookeeper zoo.cfg: no secureClientPort: ZooKeeper serves its clients no TLS");
    }

    @Test
    void zookeeperTls_catchesAClientWithoutASetting_filesOutsideItsSecret_thePlaintextPort_andLateOptions() {
        List<String> problems = broken(DeployRules::zookeeperTls, o -> {
            setEnv(container(o, "Deployment", "lastunit-router"), "LASTUNIT_ROUTER_ZOOKEEPER_TLS_KEY", null);
            setEnv(container(o, "StatefulSet", "lastunit-shard"), "LASTUNIT_SHARD_ZOOKEEPER_TLS_CERTIFICATE",
                    "/etc/lastunit/tls/ca.crt");
            List<Object> job = list(container(o, "Job", "lastunit-bootstrap").get("args"), "args");
            job.set(job.indexOf("--zookeeper-tls-ca") + 1, "/etc/ssl/certs/ca.crt");
            List<Object> admin = list(container(o, "Deployment", "lastunit-admin").get("args"), "args");
            int at = admin.indexOf("--zookeeper-tls-cert");
            List<Object> options = new java.util.ArrayList<>(admin.subList(at, at + 6));
            admin.subList(at, at + 6).clear();
            admin.addAll(options);
            for (Map<String, Object> cm : o) {
                if ("ConfigMap".equals(cm.get("kind")) && Manifests.name(cm).startsWith("lastunit-platform")) {
                    Map<String, Object> data = map(cm.get("data"), "data");
                    data.put("ZOOKEEPER", data.get("ZOOKEEPER").toString().replaceFirst(":2281,", ":2181,"));
                }
            }
            list(at(object(o, "Certificate", "lastunit-zookeeper"), "spec", "dnsNames"), "dnsNames")
                    .remove("lastunit-zookeeper-2.lastunit-zookeeper-headless");
        });
        assertThat(problems).contains(
                "Deployment lastunit-router container router: LASTUNIT_ROUTER_ZOOKEEPER_TLS_KEY is unset, not the tls.key"
                        + " of a mounted Certificate's Secret: no TLS to ZooKeeper",
                "StatefulSet lastunit-shard container shard-node: LASTUNIT_SHARD_ZOOKEEPER_TLS_CERTIFICATE is"
                        + " /etc/lastunit/tls/ca.crt, not the tls.crt of a mounted Certificate's Secret: no TLS to"
                        + " ZooKeeper",
                "Job lastunit-bootstrap container cells: --zookeeper-tls-ca is /etc/ssl/certs/ca.crt, not the ca.crt of a"
                        + " mounted Certificate's Secret: no TLS to ZooKeeper",
                "Deployment lastunit-admin container admin: --zookeeper-tls-cert comes after serve: it is an option of"
                        + " admin, before the subcommand",
                "StatefulSet lastunit-balancer container bucket-balancer: LASTUNIT_BALANCER_ZOOKEEPER dials"
                        + " lastunit-zookeeper-0.lastunit-zookeeper-headless:2181, not ZooKeeper's secure client port 2281",
                "Certificate lastunit-zookeeper: lacks lastunit-zookeeper-2.lastunit-zookeeper-headless, a host of the"
                        + " connect string: the clients' hostname check would refuse ZooKeeper");
    }

    @Test
    void productionTls_catchesAZooKeeperCertificateThatPassesForALastunitIdentity() {
        List<String> problems = broken(DeployRules::productionTls, o -> map(object(o, "Certificate",
                "lastunit-zookeeper").get("spec"), "spec").put("uris", List.of("spiffe://lastunit/admin/lastunit-zk")));
        assertThat(problems).containsExactly("Certificate lastunit-zookeeper: ZooKeeper's certificate names the lastunit"
                + " identities [spiffe://lastunit/admin/lastunit-zk]: ZooKeeper is not a lastunit service, and its key"
                + " must not pass for one");
    }

    @Test
    void routerGrants_catchAConfigFileBesideTheTokensFile_andASubPathMount() {
        List<String> problems = broken(DeployRules::routerGrants, o -> {
            Map<String, Object> router = container(o, "Deployment", "lastunit-router");
            setEnv(router, "MICRONAUT_CONFIG_FILES", "/etc/lastunit/grants/router-grants.yml");
            for (Object vm : list(router.get("volumeMounts"), "volumeMounts")) {
                if ("grants".equals(map(vm, "vm").get("name"))) {
                    map(vm, "vm").put("subPath", "grants");
                }
            }
        });
        assertThat(problems).containsExactly(
                "Deployment lastunit-router container router: sets MICRONAUT_CONFIG_FILES: its grants come from"
                        + " LASTUNIT_ROUTER_TOKENS_FILE alone",
                "Deployment lastunit-router container router: LASTUNIT_ROUTER_TOKENS_FILE /etc/lastunit/grants/grants"
                        + " is in no Secret volume mounted whole");
    }

    @Test
    void secrets_catchASecretNobodyMakes() {
        Manifests typo = PROD.with(o -> {
            for (Object e : env(container(o, "StatefulSet", "lastunit-shard"))) {
                Object ref = at(e, "valueFrom", "secretKeyRef");
                if (ref != null) {
                    map(ref, "ref").put("name", "lastunit-shard-dbs");
                }
            }
        });
        assertThat(DeployRules.secrets(typo, K8sManifestsTest.PROD_EXTERNAL_SECRETS)).singleElement().asString()
                .contains("[lastunit-admin-grants, lastunit-backup-s3, lastunit-router-grants, lastunit-shard-db,"
                        + " lastunit-shard-dbs, lastunit-zookeeper-credentials]");
    }

    @Test
    void monitoring_catchesAJobTheRulesExpectThatNoServiceNames() throws Exception {
        String rules = K8sManifestsTest.rulesText();
        assertThat(DeployRules.monitoring(PROD, rules)).isEmpty();
        Manifests noShardJob = PROD.with(o -> Manifests.labels(object(o, "Service", "lastunit-shard"))
                .remove("lastunit.io/job"));
        assertThat(String.join("\n", DeployRules.monitoring(noShardJob, rules)))
                .contains("Service lastunit-shard: scraped but has no label lastunit.io/job", "[lastunit-shard]");
    }
}
