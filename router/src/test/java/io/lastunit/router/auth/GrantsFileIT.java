package io.lastunit.router.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lastunit.testkit.TestTimeouts;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Grants read from a real file, read again as it changes; a bad file changes nothing. */
class GrantsFileIT {
    static final String A = Authenticator.sha256Hex("token-a") + ":checkout:acme";
    static final String B = Authenticator.sha256Hex("token-b") + ":ops:*:admin";

    @TempDir
    Path dir;

    @Test
    void aChangedFile_isTakenWithoutARestart() throws Exception {
        Path file = write("# grants\n" + A + "\n");
        try (GrantsFile grants = GrantsFile.watch(file, Duration.ofMillis(100))) {
            assertThat(grants.current().authenticate("token-a")).isPresent();
            assertThat(grants.current().authenticate("token-b")).isEmpty();

            replace(file, B + "\n\n");

            Awaitility.await().atMost(TestTimeouts.scaled(Duration.ofSeconds(10))).pollInterval(Duration.ofMillis(20))
                    .until(() -> grants.current().authenticate("token-b").isPresent());
            assertThat(grants.current().authenticate("token-a")).isEmpty();
            assertThat(grants.current().authenticate("token-b").orElseThrow().admin()).isTrue();
            assertThat(grants.reloads()).isEqualTo(1);
            assertThat(grants.grantCount()).isEqualTo(1);
        }
    }

    @Test
    void aMalformedFile_keepsTheGrantsInForce_namesTheLine_andIsCountedOnce() throws Exception {
        Path file = write(A + "\n");
        try (GrantsFile grants = GrantsFile.watch(file, Duration.ofHours(1))) {
            replace(file, B + "\nnot-a-grant\n");
            assertThat(grants.reloadNow()).isFalse();
            assertThat(grants.lastFailure()).hasValueSatisfying(m -> assertThat(m).contains("line 2", "the grant is not"));
            assertThat(grants.current().authenticate("token-a")).isPresent();
            assertThat(grants.current().authenticate("token-b")).isEmpty();
            assertThat(grants.reloadNow()).isFalse();
            assertThat(grants.reloadFailures()).isEqualTo(1);

            replace(file, A + "\n" + A.toUpperCase(java.util.Locale.ROOT).substring(0, 64) + ":dup:acme\n");
            assertThat(grants.reloadNow()).isFalse();
            assertThat(grants.lastFailure()).hasValueSatisfying(m -> assertThat(m).contains("repeats a digest"));

            replace(file, "# nobody\n");
            assertThat(grants.reloadNow()).isFalse();
            assertThat(grants.lastFailure()).hasValueSatisfying(m -> assertThat(m).contains("holds no grant"));
            assertThat(grants.reloadFailures()).isEqualTo(3);
            assertThat(grants.current().authenticate("token-a")).isPresent();

            replace(file, B + "\n");
            assertThat(grants.reloadNow()).isTrue();
            assertThat(grants.lastFailure()).isEmpty();
            assertThat(grants.current().authenticate("token-b")).isPresent();
        }
    }

    @Test
    void aBadFirstRead_failsTheStart_namingTheFile() throws Exception {
        Path file = write("");
        assertThatThrownBy(() -> GrantsFile.watch(file, Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(file + " holds no grant");
        assertThatThrownBy(() -> GrantsFile.watch(dir.resolve("missing"), Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cannot read");
    }

    private Path write(String text) throws Exception {
        Path f = dir.resolve("grants");
        Files.writeString(f, text);
        return f;
    }

    /** As an operator's tooling should: written beside, renamed over. */
    private void replace(Path file, String text) throws Exception {
        Path tmp = dir.resolve("grants.tmp");
        Files.writeString(tmp, text);
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }
}
