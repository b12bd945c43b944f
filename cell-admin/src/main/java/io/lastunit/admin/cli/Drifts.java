package io.lastunit.admin.cli;

import io.lastunit.api.shard.v1.Drift;

/** How a drift is printed, the same in {@code admin check} and in the demo. */
public final class Drifts {
    private Drifts() {
    }

    /** {@code KIND tenant/item#bucket [buyer=B] expected=E actual=A}. */
    public static String brief(Drift d) {
        StringBuilder sb = new StringBuilder().append(d.getKind()).append(' ').append(d.getTenantId()).append('/')
                .append(d.getItemId());
        if (d.getBucketNo() >= 0) {
            sb.append('#').append(d.getBucketNo());
        }
        if (!d.getBuyerId().isEmpty()) {
            sb.append(" buyer=").append(d.getBuyerId());
        }
        return sb.append(" expected=").append(d.getExpected()).append(" actual=").append(d.getActual()).toString();
    }

    /** {@link #brief} with the shard and the checker's sentence. */
    public static String line(String cell, String shard, Drift d) {
        String s = "DRIFT " + cell + "/" + shard + " " + brief(d);
        return d.getDetail().isEmpty() ? s : s + ": " + d.getDetail();
    }
}
