package io.lastunit.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * Renders every overlay with {@code kubectl kustomize} (as an operator would before applying it)
 * and checks the rendered objects against the deployment's rules ({@link DeployRules}) and the
 * services' own settings (their application.yml). No cluster is needed; what only a cluster can
 * check (the API server's schemas, the CRDs of CloudNativePG, cert-manager and the Prometheus
 * operator) is listed in k8s/README.md.
 */
class K8sManifestsTest {
    static final Set<String> PROD_EXTERNAL_SECRETS =
            Set.of("lastunit-shard-db", "lastunit-router-grants", "lastunit-admin-grants", "lastunit-zookeeper-credentials",
                    "lastunit-backup-s3");

    private static void assertNone(String rule, List<String> problems) {
        assertThat(problems).as("%s:%n  %s", rule, String.join("\n  ", problems)).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"dev", "prod"})
    void everyContainer_isDigestPinned_sized_nonRoot_andLockedDown(String overlay) {
        Manifests m = Manifests.of(overlay);
        assertThat(m.workloads()).hasSizeGreaterThanOrEqualTo(6);
        assertNone(overlay + " containers", DeployRules.containers(m));
    }

    @ParameterizedTest
    @ValueSource(strings = {"dev", "prod"})
    void everyLongRunningContainer_hasProbes_nativeGrpcOnTheHealthPortForLastunit(String overlay) {
        assertNone(overlay + " probes", DeployRules.probes(Manifests.of(overlay)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"dev", "prod"})
    void portsAndAddresses_matchTheServicesSettings(String overlay) {
        assertNone(overlay + " ports", DeployRules.ports(Manifests.of(overlay)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"dev", "prod"})
    void everyProcess_connectsToTheZooKeeperEnsemble(String overlay) {
        assertNone(overlay + " zookeeper", DeployRules.zookeeper(Manifests.of(overlay)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"dev", "prod"})
    void oneDatabasePerShard_andTheBootstrapCreatesTheCellAtTheShardsNames(String overlay) {
        assertNone(overlay + " shards", DeployRules.shards(Manifests.of(overlay)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"dev", "prod"})
    void zooKeeperRoutersShardsAndBalancers_areEachInOneDisruptionBudget(String overlay) {
        assertNone(overlay + " disruption budgets", DeployRules.disruptionBudgets(Manifests.of(overlay)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"dev", "prod"})
    void networkPolicies_letOnlyTheRightCallersIn(String overlay) {
        assertNone(overlay + " network policies", DeployRules.networkPolicies(Manifests.of(overlay)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"dev", "prod"})
    void prometheus_scrapesEveryJobTheAlertRulesAskFor(String overlay) throws Exception {
        assertNone(overlay + " monitoring", DeployRules.monitoring(Manifests.of(overlay), rulesText()));
    }

    @Test
    void devSecrets_areAllMadeHere_andProdUsesOnlyTheDeclaredExternalOnes() {
        assertNone("dev secrets", DeployRules.secrets(Manifests.of("dev"), Set.of()));
        assertNone("prod secrets", DeployRules.secrets(Manifests.of("prod"), PROD_EXTERNAL_SECRETS));
        assertThat(Manifests.of("prod").kind("Secret")).as("prod renders no Secret values").isEmpty();
    }

    @Test
    void devSecrets_sayTheyAreForDevelopment() {
        for (Map<String, Object> secret : Manifests.of("dev").kind("Secret")) {
            Map<String, Object> data = Manifests.map(secret.get("data"), Manifests.id(secret) + " data");
            for (var e : data.entrySet()) {
                String value = new String(java.util.Base64.getMimeDecoder().decode(e.getValue().toString()),
                        java.nio.charset.StandardCharsets.UTF_8);
                if (!e.getKey().equals("username")) {
                    assertThat(value).as("%s %s", Manifests.id(secret), e.getKey()).contains("dev");
                }
            }
        }
    }

    @Test
    void prodDatabases_replicateSynchronously_failOverByQuorum_andAreBackedUp() {
        assertNone("prod databases", DeployRules.productionDatabases(Manifests.of("prod")));
    }

    @Test
    void prod_runsMutualTlsByRoleWithCertManagerCertificatesForEveryIdentity() {
        assertNone("prod TLS", DeployRules.productionTls(Manifests.of("prod")));
    }

    @Test
    void prod_givesEveryLastunitProcessTheZooKeeperCredentials() {
        assertNone("prod ZooKeeper credentials", DeployRules.zookeeperCredentials(Manifests.of("prod")));
    }

    @Test
    void prod_zooKeeperServesOnlyTls_andEveryProcessDialsItWithItsCertificate() {
        assertNone("prod ZooKeeper TLS", DeployRules.zookeeperTls(Manifests.of("prod")));
    }

    /** The zoo.cfg settings of TLS to ZooKeeper, which only prod has (k8s/overlays/prod/zookeeper-tls.yaml). */
    static boolean isZooKeeperTlsSetting(String key) {
        return key.startsWith("ssl.") || Set.of("secureClientPort", "serverCnxnFactory", "sslQuorum",
                "clientPortAddress").contains(key);
    }

    /** Prod carries a copy of the base's zoo.cfg (kustomize cannot add lines to it): the copy may differ only by TLS. */
    @Test
    void prodZooCfg_isTheBasesWithTlsAdded() {
        java.util.Properties dev = DeployRules.zooCfg(Manifests.of("dev"));
        java.util.Properties prod = DeployRules.zooCfg(Manifests.of("prod"));
        assertThat(dev.stringPropertyNames().stream().filter(K8sManifestsTest::isZooKeeperTlsSetting))
                .as("dev's zoo.cfg has no TLS").isEmpty();
        Map<String, String> prodWithoutTls = new TreeMap<>();
        prod.stringPropertyNames().stream().filter(k -> !isZooKeeperTlsSetting(k))
                .forEach(k -> prodWithoutTls.put(k, prod.getProperty(k)));
        Map<String, String> devAll = new TreeMap<>();
        dev.stringPropertyNames().forEach(k -> devAll.put(k, dev.getProperty(k)));
        assertThat(prodWithoutTls).as("prod's zoo.cfg (overlays/prod/zookeeper-tls.yaml) without its TLS settings is"
                + " base/zookeeper.yaml's: change both").isEqualTo(devAll);
    }

    /**
     * ZooKeeper's own parser takes each overlay's zoo.cfg (the version lastunit builds with): dev's
     * plaintext client port on every address, prod's on the loopback only beside the secure client
     * port and quorum TLS. The metrics provider is left out: its jar is in the image, not here.
     */
    @ParameterizedTest
    @ValueSource(strings = {"dev", "prod"})
    void zooCfg_isAcceptedByZooKeeper(String overlay, @org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        java.util.Properties cfg = DeployRules.zooCfg(Manifests.of(overlay));
        cfg.remove("metricsProvider.className");
        cfg.remove("metricsProvider.httpPort");
        cfg.setProperty("dataDir", dir.toString());
        cfg.setProperty("dataLogDir", dir.toString());
        Files.writeString(dir.resolve("myid"), "1");
        java.util.Properties systemBefore = (java.util.Properties) System.getProperties().clone();
        org.apache.zookeeper.server.quorum.QuorumPeerConfig parsed = new org.apache.zookeeper.server.quorum.QuorumPeerConfig();
        try {
            parsed.parseProperties(cfg);
        } finally {
            // ZooKeeper copies the settings it does not know into system properties (zookeeper.ssl.*).
            System.setProperties(systemBefore);
        }
        assertThat(parsed.getQuorumVerifier().getVotingMembers()).hasSize(3);
        if ("prod".equals(overlay)) {
            assertThat(parsed.getClientPortAddress().getAddress().isLoopbackAddress()).as("plaintext on the loopback")
                    .isTrue();
            assertThat(parsed.getSecureClientPortAddress().getPort()).isEqualTo(2281);
            assertThat(parsed.isSslQuorum()).isTrue();
        } else {
            assertThat(parsed.getClientPortAddress().getAddress().isAnyLocalAddress()).isTrue();
            assertThat(parsed.getClientPortAddress().getPort()).isEqualTo(2181);
            assertThat(parsed.getSecureClientPortAddress()).isNull();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"dev", "prod"})
    void routers_readTheirGrantsFromAMountedFile(String overlay) {
        assertNone(overlay + " router grants", DeployRules.routerGrants(Manifests.of(overlay)));
    }

    /** Dev is plaintext and open (k8s/README.md): no certificates, no mutual TLS, no ZooKeeper TLS or ACLs. */
    @Test
    void dev_isPlaintext_andWithoutZooKeeperCredentials() {
        Manifests dev = Manifests.of("dev");
        assertThat(dev.kind("Certificate")).isEmpty();
        for (Map<String, Object> w : dev.workloads()) {
            for (Map<String, Object> c : Manifests.allContainers(w)) {
                for (Object e : Manifests.list(c.getOrDefault("env", List.of()), "env")) {
                    assertThat(String.valueOf(Manifests.map(e, "env").get("name"))).as(Manifests.id(w))
                            .doesNotContain("TLS", "ZOOKEEPER_CREDENTIALS");
                }
                assertThat(Manifests.args(c)).as(Manifests.id(w)).doesNotContain("--tls-cert",
                        "--shard-trust-certificate", "--zookeeper-credentials", "--zookeeper-tls-cert");
            }
        }
    }

    @Test
    void bothOverlays_runTheImagesOfTheReleaseComponent() {
        Map<String, String> dev = lastunitImages(Manifests.of("dev"));
        Map<String, String> prod = lastunitImages(Manifests.of("prod"));
        assertThat(dev.keySet()).containsExactlyInAnyOrder("lastunit-shard-node", "lastunit-router",
                "lastunit-bucket-balancer", "lastunit-admin");
        assertThat(prod).isEqualTo(dev);
    }

    private static Map<String, String> lastunitImages(Manifests m) {
        Map<String, String> images = new TreeMap<>();
        for (Map<String, Object> w : m.workloads()) {
            for (Map<String, Object> c : Manifests.allContainers(w)) {
                DeployRules.Service.of(c).ifPresent(s -> {
                    String before = images.put(s.image, c.get("image").toString());
                    assertThat(before == null || before.equals(c.get("image"))).as("%s runs one image of %s", m.overlay,
                            s.image).isTrue();
                });
            }
        }
        return images;
    }

    @Test
    void thePrometheusRule_carriesExactlyTheGroupsOfTheRulesFile() throws Exception {
        Object rules = new Yaml(new SafeConstructor(new LoaderOptions())).load(rulesText());
        for (String overlay : List.of("dev", "prod")) {
            Map<String, Object> rule = Manifests.of(overlay).get("PrometheusRule", "lastunit");
            assertThat(Manifests.at(rule, "spec", "groups"))
                    .as("%s: the PrometheusRule's groups are observability/prometheus/lastunit-rules.yml's; after"
                            + " changing that file run k8s/update-prometheus-rule", overlay)
                    .isEqualTo(Manifests.at(rules, "groups"));
        }
    }

    static String rulesText() throws java.io.IOException {
        return Files.readString(Manifests.REPO.resolve(Path.of("observability", "prometheus", "lastunit-rules.yml")));
    }
}
