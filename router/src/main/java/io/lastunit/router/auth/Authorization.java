package io.lastunit.router.auth;

import io.lastunit.common.Failure;
import io.lastunit.common.Reason;

/**
 * What an authenticated caller may do: use the tenants of its grant, and, with the admin role,
 * CreateItem and Restock. Reads the {@link Authenticator.Principal} that {@link AuthInterceptor}
 * put in the call's context, so it is asked on the thread that runs the handler. Stateless.
 */
public final class Authorization {
    private Authorization() {
    }

    /**
     * Refuses the current call with PERMISSION_DENIED unless its caller may use {@code tenant}
     * and, for an {@code adminCall}, has the admin role; UNAUTHENTICATED when it has no caller.
     */
    public static void check(String tenant, boolean adminCall) {
        check(caller(), tenant, adminCall);
    }

    /** {@link #check(String, boolean)} for the caller {@code p}. */
    static void check(Authenticator.Principal p, String tenant, boolean adminCall) {
        if (!p.mayUse(tenant)) {
            throw Failure.of(Reason.PERMISSION_DENIED, "caller " + p.name() + " may not use tenant " + tenant);
        }
        if (adminCall && !p.admin()) {
            throw Failure.of(Reason.PERMISSION_DENIED, "caller " + p.name() + " lacks the admin role");
        }
    }

    /** The current call's caller, as {@link AuthInterceptor} authenticated it. */
    static Authenticator.Principal caller() {
        Authenticator.Principal p = AuthInterceptor.PRINCIPAL.get();
        if (p == null) {
            throw Failure.of(Reason.UNAUTHENTICATED, "no principal on the call");
        }
        return p;
    }
}
