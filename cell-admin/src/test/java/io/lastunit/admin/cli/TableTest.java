package io.lastunit.admin.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class TableTest {

    @Test
    void padsColumns_rightAlignsNumbers_noTrailingSpaces() {
        Table t = new Table("cell", "shard", "#items", "live").row("shared", "shared-local-1", 12, "yes")
                .row("big", "b", 3, "no");
        assertThat(t.lines()).containsExactly(
                "cell    shard           items  live",
                "shared  shared-local-1     12  yes",
                "big     b                   3  no");
    }

    @Test
    void refusesARowOfTheWrongWidth() {
        assertThatThrownBy(() -> new Table("a", "b").row("x")).isInstanceOf(IllegalArgumentException.class);
    }
}
