package io.lastunit.shard.decide;

import io.lastunit.api.inventory.v1.HoldState;

/**
 * What a Reserve gets when its key was used before, and whether a claim of a key may be
 * recorded here. Pure.
 */
final class KeyRules {
    private KeyRules() {
    }

    /**
     * A key's repeat: the same request gets its first use back (a claim: its claim; a Reserve
     * forwarded home: forwarded again); anything else is refused naming the first use.
     */
    static Outcome repeat(Call.Reserve r, HoldFacts first) {
        boolean same = first.fingerprint().equals(r.fingerprint());
        boolean claimRow = first.state() == HoldState.CLAIMED;
        if (r.claim() ? same && claimRow : same && !claimRow) {
            return first.state() == HoldState.FORWARDED ? new Outcome.ForwardedAgain(first) : new Outcome.Existing(first);
        }
        return new Outcome.KeyReused(first);
    }

    /**
     * Why this shard may not record {@code r}'s claim (null: it may). A claim comes from a region
     * of an item sold in several regions that is not its home, and is recorded at home.
     */
    static Outcome.ClaimRefused refuseClaim(Call.Reserve r, ItemFacts item) {
        String what = "item " + r.slot().tenantId() + "/" + r.slot().itemId();
        if (!item.homeRegion().equals(r.claimHome())) {
            return new Outcome.ClaimRefused("home_region", "is " + r.claimHome() + ", but " + what
                    + " has home region " + item.homeRegion());
        }
        if (!item.multiRegion()) {
            return new Outcome.ClaimRefused("home_region", what + " is sold in one region only: its keys need no claim");
        }
        if (item.isHome(r.region()) || !item.regions().contains(r.region())) {
            return new Outcome.ClaimRefused("request.region", "is " + r.region() + ": a claim names a region of "
                    + what + " other than its home " + item.homeRegion() + " (regions " + item.regions() + ")");
        }
        return null;
    }
}
