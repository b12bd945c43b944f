package io.lastunit.router.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class AuthenticatorTest {

    /** SHA-256("abc"), FIPS 180-2 appendix B.1. */
    static final String SHA256_ABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    /** SHA-256(""). */
    static final String SHA256_EMPTY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    static final String ALICE_TOKEN = "alice-secret-token-1";
    static final String BOB_TOKEN = "bob-secret-token-2";

    static String grant(String token, String rest) {
        return Authenticator.sha256Hex(token) + ":" + rest;
    }

    @Test
    void sha256HexMatchesKnownDigests() {
        assertThat(Authenticator.sha256Hex("abc")).isEqualTo(SHA256_ABC);
        assertThat(Authenticator.sha256Hex("")).isEqualTo(SHA256_EMPTY);
        assertThat(Authenticator.sha256Hex("The quick brown fox jumps over the lazy dog"))
                .isEqualTo("d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592");
        // the token is hashed as UTF-8 (U+00E9 is the two bytes C3 A9)
        assertThat(Authenticator.sha256Hex("\u00e9"))
                .isEqualTo("4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c");
        assertThat(Authenticator.sha256Hex(ALICE_TOKEN)).matches("[0-9a-f]{64}");
    }

    @Test
    void grantWithPinnedDigestAuthenticatesItsLiteralToken() {
        Authenticator a = Authenticator.fromGrants(List.of(SHA256_ABC + ":abc-caller:shop-1"));

        assertThat(a.authenticate("abc")).contains(new Authenticator.Principal("abc-caller", Set.of("shop-1"), false));
        assertThat(a.authenticate("abd")).isEmpty();
        assertThat(a.authenticate(SHA256_ABC)).as("the digest itself is not a token").isEmpty();
    }

    @Test
    void grantAuthenticatesItsTokenWithNameAndTenants() {
        Authenticator a = Authenticator.fromGrants(List.of(
                grant(ALICE_TOKEN, "alice:shop-a,shop-b"),
                grant(BOB_TOKEN, "bob:shop-c:admin")));

        Optional<Authenticator.Principal> alice = a.authenticate(ALICE_TOKEN);
        assertThat(alice).contains(new Authenticator.Principal("alice", Set.of("shop-a", "shop-b"), false));
        assertThat(alice.get().name()).isEqualTo("alice");
        assertThat(alice.get().tenants()).containsExactlyInAnyOrder("shop-a", "shop-b");
        assertThat(alice.get().admin()).isFalse();

        Optional<Authenticator.Principal> bob = a.authenticate(BOB_TOKEN);
        assertThat(bob).contains(new Authenticator.Principal("bob", Set.of("shop-c"), true));
        assertThat(bob.get().admin()).isTrue();
    }

    @Test
    void unknownTokensAreNotAuthenticated() {
        Authenticator a = Authenticator.fromGrants(List.of(grant(ALICE_TOKEN, "alice:shop-a")));

        assertThat(a.authenticate("not-a-token")).isEmpty();
        assertThat(a.authenticate(ALICE_TOKEN.toUpperCase(Locale.ROOT))).isEmpty();
        assertThat(a.authenticate(ALICE_TOKEN + " ")).isEmpty();
        assertThat(a.authenticate(ALICE_TOKEN.substring(1))).isEmpty();
    }

    @Test
    void emptyAndNullTokensAreNotAuthenticatedEvenWhenTheEmptyDigestIsGranted() {
        Authenticator a = Authenticator.fromGrants(List.of(SHA256_EMPTY + ":nobody:*:admin"));

        assertThat(a.authenticate("")).isEmpty();
        assertThat(a.authenticate(null)).isEmpty();
    }

    @Test
    void noGrantsAuthenticateNothing() {
        Authenticator a = Authenticator.fromGrants(List.of());

        assertThat(a.authenticate("abc")).isEmpty();
        assertThat(a.authenticate(ALICE_TOKEN)).isEmpty();
    }

    @Test
    void upperCaseDigestAndSurroundingWhitespaceInAGrantAreAccepted() {
        Authenticator a = Authenticator.fromGrants(List.of(
                "  " + SHA256_ABC.toUpperCase(Locale.ROOT) + ":abc-caller:shop-1  "));

        assertThat(a.authenticate("abc")).contains(new Authenticator.Principal("abc-caller", Set.of("shop-1"), false));
    }

    @Test
    void starMeansEveryTenant() {
        Authenticator a = Authenticator.fromGrants(List.of(grant(ALICE_TOKEN, "ops:*")));

        Authenticator.Principal p = a.authenticate(ALICE_TOKEN).orElseThrow();
        assertThat(p.tenants()).containsExactly("*");
        assertThat(p.admin()).isFalse();
        assertThat(p.mayUse("shop-a")).isTrue();
        assertThat(p.mayUse("any-other-tenant")).isTrue();
        assertThat(p.mayUse("*")).isTrue();
    }

    @Test
    void adminFlagIsSetOnlyByTheFourthPart() {
        Authenticator a = Authenticator.fromGrants(List.of(
                grant(ALICE_TOKEN, "root:*:admin"),
                grant(BOB_TOKEN, "plain:*")));

        assertThat(a.authenticate(ALICE_TOKEN).orElseThrow().admin()).isTrue();
        assertThat(a.authenticate(BOB_TOKEN).orElseThrow().admin()).isFalse();
    }

    @Test
    void mayUseOnlyListedTenants() {
        Authenticator.Principal p = Authenticator.fromGrants(List.of(grant(ALICE_TOKEN, "alice:shop-a,shop-b")))
                .authenticate(ALICE_TOKEN).orElseThrow();

        assertThat(p.mayUse("shop-a")).isTrue();
        assertThat(p.mayUse("shop-b")).isTrue();
        assertThat(p.mayUse("shop-c")).isFalse();
        assertThat(p.mayUse("SHOP-A")).as("tenant ids are case-sensitive").isFalse();
        assertThat(p.mayUse("shop-a,shop-b")).isFalse();
        assertThat(p.mayUse("")).isFalse();
        assertThat(p.mayUse("*")).as("a listed caller does not get '*'").isFalse();
    }

    @Test
    void principalRecordMayUseIsIndependentOfTheParser() {
        assertThat(new Authenticator.Principal("x", Set.of("t1"), false).mayUse("t1")).isTrue();
        assertThat(new Authenticator.Principal("x", Set.of("t1"), false).mayUse("t2")).isFalse();
        assertThat(new Authenticator.Principal("x", Set.of("t1", "*"), false).mayUse("t2")).isTrue();
        assertThat(new Authenticator.Principal("x", Set.of(), true).mayUse("t1")).isFalse();
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {
            // bad hex
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015a:n:t",   // 63 hex digits
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad0:n:t", // 65 hex digits
            "ga7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad:n:t",  // not hex
            "abc:n:t",                                                              // a token, not a digest
            ":n:t",
            // wrong part count
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad:n",
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad:n:t:admin:x",
            "",
            // unknown 4th part
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad:n:t:root",
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad:n:t:Admin",
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad:n:t:",
            // blank name or tenants
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad::t",
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad: :t",
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad:n:",
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad:n: :admin",
    })
    void malformedGrantIsRefusedNamingItsIndex(String bad) {
        List<String> grants = List.of(grant(ALICE_TOKEN, "alice:shop-a"), grant(BOB_TOKEN, "bob:shop-b"), bad);

        assertThatThrownBy(() -> Authenticator.fromGrants(grants))
                .isExactlyInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("token grant #2 ")
                .hasMessageContaining("<sha256-hex>:<name>:<tenants>[:admin]");
    }

    @Test
    void malformedFirstGrantIsNamedAsIndexZero() {
        assertThatThrownBy(() -> Authenticator.fromGrants(List.of("nope", grant(ALICE_TOKEN, "alice:shop-a"))))
                .isExactlyInstanceOf(IllegalArgumentException.class)
                .hasMessage("token grant #0 is not <sha256-hex>:<name>:<tenants>[:admin]");
    }

    @Test
    void duplicateDigestIsRefusedNamingTheLaterGrant() {
        assertThatThrownBy(() -> Authenticator.fromGrants(List.of(
                grant(ALICE_TOKEN, "alice:shop-a"),
                grant(BOB_TOKEN, "bob:shop-b"),
                grant(ALICE_TOKEN, "mallory:*:admin"))))
                .isExactlyInstanceOf(IllegalArgumentException.class)
                .hasMessage("token grant #2 repeats a digest");
    }

    @Test
    void duplicateDigestDifferingOnlyInHexCaseIsRefused() {
        assertThatThrownBy(() -> Authenticator.fromGrants(List.of(
                SHA256_ABC + ":lower:shop-a",
                SHA256_ABC.toUpperCase(Locale.ROOT) + ":upper:*:admin")))
                .isExactlyInstanceOf(IllegalArgumentException.class)
                .hasMessage("token grant #1 repeats a digest");
    }

    @Test
    void duplicateTenantInAGrant_isRefusedNamingItsIndex() {
        List<String> grants = List.of(grant(ALICE_TOKEN, "alice:shop-a"), grant(BOB_TOKEN, "bob:shop-b,shop-b"));
        assertThatThrownBy(() -> Authenticator.fromGrants(grants))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("token grant #1 names an empty or repeated tenant");
    }
}
