package io.lastunit.bench.jmh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class BenchDatabaseTest {

    @Test
    void databaseName_isPrefixedCleanedAndSuffixed() {
        assertThat(BenchDatabase.databaseName("Engine 1000", 0xAB)).isEqualTo("lastunit_bench_engine_1000_000000ab");
        assertThat(BenchDatabase.databaseName("e2e_shared-local-1", -1))
                .isEqualTo("lastunit_bench_e2e_shared_local_1_ffffffff");
        assertThat(BenchDatabase.databaseName("", 1)).isEqualTo("lastunit_bench_x_00000001");
        assertThat(BenchDatabase.databaseName(null, 1)).isEqualTo("lastunit_bench_x_00000001");
    }

    @Test
    void databaseName_fitsPostgresIdentifiers() {
        String name = BenchDatabase.databaseName("a".repeat(200), 7);
        assertThat(name).hasSize(BenchDatabase.NAME_LENGTH_MAX).startsWith("lastunit_bench_aaa").endsWith("_00000007");
        assertThat(name).matches("[a-z0-9_]+");
    }

    @Test
    void urlFor_replacesOnlyTheDatabase() {
        assertThat(BenchDatabase.urlFor("jdbc:postgresql://127.0.0.1:5432/lastunit", "db1"))
                .isEqualTo("jdbc:postgresql://127.0.0.1:5432/db1");
        assertThat(BenchDatabase.urlFor("jdbc:postgresql://h:5432/lastunit?sslmode=disable&x=/y", "db1"))
                .isEqualTo("jdbc:postgresql://h:5432/db1?sslmode=disable&x=/y");
        assertThat(BenchDatabase.urlFor("jdbc:postgresql://h1:5432,h2:5433/lastunit?targetServerType=primary", "d"))
                .isEqualTo("jdbc:postgresql://h1:5432,h2:5433/d?targetServerType=primary");
        assertThat(BenchDatabase.urlFor("jdbc:postgresql://localhost", "d")).isEqualTo("jdbc:postgresql://localhost/d");
        assertThat(BenchDatabase.urlFor("jdbc:postgresql://localhost/?ssl=false", "d"))
                .isEqualTo("jdbc:postgresql://localhost/d?ssl=false");
        assertThat(BenchDatabase.urlFor("jdbc:postgresql:lastunit?user=u", "d")).isEqualTo("jdbc:postgresql:d?user=u");
    }

    @Test
    void urlFor_refusesOtherDrivers() {
        assertThatThrownBy(() -> BenchDatabase.urlFor("jdbc:mysql://h/db", "d"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void server_comesFromTheEnvironment_withDefaults() {
        BenchDatabase.Server defaults = BenchDatabase.Server.fromEnvironment(Map.<String, String>of()::get);
        assertThat(defaults).isEqualTo(new BenchDatabase.Server("jdbc:postgresql://127.0.0.1:5432/lastunit",
                "lastunit", "lastunit"));

        Map<String, String> env = Map.of("LASTUNIT_BENCH_JDBC_URL", "jdbc:postgresql://db:6432/postgres",
                "LASTUNIT_BENCH_DB_USER", "bench", "LASTUNIT_BENCH_DB_PASSWORD", "secret");
        assertThat(BenchDatabase.Server.fromEnvironment(env::get))
                .isEqualTo(new BenchDatabase.Server("jdbc:postgresql://db:6432/postgres", "bench", "secret"));

        Map<String, String> blank = Map.of("LASTUNIT_BENCH_JDBC_URL", " ", "LASTUNIT_BENCH_DB_USER", "");
        assertThat(BenchDatabase.Server.fromEnvironment(blank::get)).isEqualTo(defaults);
    }

    @Test
    void quote_doublesQuotes() {
        assertThat(BenchDatabase.quote("a\"b")).isEqualTo("\"a\"\"b\"");
    }
}
