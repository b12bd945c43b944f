package io.lastunit.admin.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lastunit.admin.demo.Catalog;
import org.junit.jupiter.api.Test;

/** The demo's split of units and items over tenants (pure). */
class CatalogTest {

    @Test
    void unitsSplitEvenly_firstItemsTakeTheRemainder() {
        Catalog c = Catalog.of(3, 7, 100, "r");
        assertThat(c.items()).extracting(Catalog.Item::total).containsExactly(15L, 15L, 14L, 14L, 14L, 14L, 14L);
        assertThat(c.units()).isEqualTo(100);
    }

    @Test
    void itemsGoRoundRobinOverTenants() {
        Catalog c = Catalog.of(2, 5, 100, "r");
        assertThat(c.tenants()).containsExactly("tenant-1", "tenant-2");
        assertThat(c.items()).extracting(Catalog.Item::tenant)
                .containsExactly("tenant-1", "tenant-2", "tenant-1", "tenant-2", "tenant-1");
        assertThat(c.itemsOf("tenant-2")).extracting(Catalog.Item::itemId).containsExactly("flash-r-2", "flash-r-4");
    }

    @Test
    void fewerUnitsThanItems_someItemsHaveNone() {
        assertThat(Catalog.of(1, 3, 2, "r").items()).extracting(Catalog.Item::total).containsExactly(1L, 1L, 0L);
    }

    @Test
    void refusesFewerItemsThanTenants() {
        assertThatThrownBy(() -> Catalog.of(3, 2, 10, "r")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Catalog.of(1, 1, -1, "r")).isInstanceOf(IllegalArgumentException.class);
    }
}
