package io.lastunit.admin.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class JdbcUrlsTest {

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "jdbc:postgresql://127.0.0.1:5432/postgres             | jdbc:postgresql://127.0.0.1:5432/db1",
            "jdbc:postgresql://127.0.0.1:5432/                     | jdbc:postgresql://127.0.0.1:5432/db1",
            "jdbc:postgresql://127.0.0.1:5432                      | jdbc:postgresql://127.0.0.1:5432/db1",
            "jdbc:postgresql://db:5432/lastunit?ssl=true&x=1       | jdbc:postgresql://db:5432/db1?ssl=true&x=1",
            "jdbc:postgresql://a:5432,b:5433/postgres?targetServerType=primary | jdbc:postgresql://a:5432,b:5433/db1?targetServerType=primary",
            "jdbc:postgresql://db?ssl=true                         | jdbc:postgresql://db/db1?ssl=true",
            "jdbc:postgresql:postgres                              | jdbc:postgresql:db1"})
    void withDatabase_replacesOnlyTheDatabase(String url, String expected) {
        assertThat(JdbcUrls.withDatabase(url, "db1")).isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource({"jdbc:mysql://h:3306/db", "postgres://h/db", "jdbc:postgresql:///db", "''"})
    void withDatabase_refusesOtherUrls(String url) {
        assertThatThrownBy(() -> JdbcUrls.withDatabase(url, "db1")).isInstanceOf(IllegalArgumentException.class);
    }

    @ParameterizedTest
    @CsvSource({"shared-local-1, lastunit_shared_local_1", "big.eu/2, lastunit_big_eu_2"})
    void databaseFor_replacesNonAlphanumerics(String shard, String expected) {
        assertThat(JdbcUrls.databaseFor("lastunit_", shard)).isEqualTo(expected);
    }
}
