package io.lastunit.balancer.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.common.invariant.ItemKey;
import org.junit.jupiter.api.Test;

class PullGroupsTest {
    private static final ItemKey SHOE = new ItemKey("acme", "shoe");

    @Test
    void pullsOfOneItemAndRegion_joinTheOpenGroup_withTheLargestQuantityAndTheLatestDeadline() {
        PullGroups groups = new PullGroups();
        PullGroups.Join first = groups.join(SHOE, "eu", 1, 1_000);
        PullGroups.Join second = groups.join(SHOE, "eu", 3, 5_000);
        PullGroups.Join third = groups.join(SHOE, "eu", 2, 2_000);
        assertThat(first.opened()).isTrue();
        assertThat(second.opened()).isFalse();
        assertThat(third.opened()).isFalse();
        assertThat(second.group()).isSameAs(first.group());
        assertThat(first.group().members()).isEqualTo(3);
        assertThat(first.group().deadlineNanos()).isEqualTo(5_000);
        assertThat(first.group().close()).isEqualTo(3);
    }

    @Test
    void anotherRegion_orAnotherItem_opensItsOwnGroup() {
        PullGroups groups = new PullGroups();
        PullGroups.Join eu = groups.join(SHOE, "eu", 1, 1_000);
        PullGroups.Join us = groups.join(SHOE, "us", 1, 1_000);
        PullGroups.Join hat = groups.join(new ItemKey("acme", "hat"), "eu", 1, 1_000);
        assertThat(us.opened()).isTrue();
        assertThat(hat.opened()).isTrue();
        assertThat(us.group()).isNotSameAs(eu.group());
        assertThat(groups.openGroups()).isEqualTo(3);
    }

    @Test
    void aClosedGroup_takesNoMoreMembers_soALaterPullIsNeverAnsweredFromAnOlderRead() {
        PullGroups groups = new PullGroups();
        PullGroups.Join first = groups.join(SHOE, "eu", 1, 1_000);
        assertThat(first.group().close()).isEqualTo(1); // its run holds the item and reads it now
        PullGroups.Join later = groups.join(SHOE, "eu", 1, 1_000);
        assertThat(later.opened()).isTrue();
        assertThat(later.group()).isNotSameAs(first.group());
        assertThat(first.group().members()).isEqualTo(1);
        first.group().close(); // closing twice (the run's finally) leaves the new group open
        assertThat(groups.openGroups()).isEqualTo(1);
    }

    @Test
    void aFullGroup_leavesTheNextPullToOpenAnother() {
        PullGroups groups = new PullGroups();
        PullGroups.Join first = groups.join(SHOE, "eu", 1, 1_000);
        for (int i = 1; i < PullGroups.MEMBERS_MAX; i++) {
            assertThat(groups.join(SHOE, "eu", 1, 1_000).opened()).isFalse();
        }
        assertThat(first.group().members()).isEqualTo(PullGroups.MEMBERS_MAX);
        PullGroups.Join overflow = groups.join(SHOE, "eu", 1, 1_000);
        assertThat(overflow.opened()).isTrue();
        assertThat(overflow.group()).isNotSameAs(first.group());
        assertThat(first.group().members()).isEqualTo(PullGroups.MEMBERS_MAX);
    }
}
