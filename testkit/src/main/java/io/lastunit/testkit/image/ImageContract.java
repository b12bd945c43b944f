package io.lastunit.testkit.image;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The tests every lastunit image passes, inherited by each module's {@code *ImageIT}, which adds
 * the test that starts its own service: the tarball holds what docs/images.md promises
 * ({@link LastunitImage#problemsIn}); {@code --help} exits 0 with the command's usage line; and
 * under a 512 MiB memory limit the JVM takes a 384 MiB maximum and 256 MiB initial heap, G1,
 * container support and the exit on OutOfMemoryError — where the host's memory would give it
 * 75% of 24 GB.
 */
public abstract class ImageContract {
    private static final long LIMIT_BYTES = 512L << 20;

    /** The subclass's {@code static} {@link ImageFixture}, registered with {@code @RegisterExtension}. */
    protected abstract ImageFixture image();

    @Test
    void image_holdsWhatDocsImagesPromise() throws Exception {
        List<String> problems = image().problems();
        assertTrue(problems.isEmpty(), () -> image().image() + " breaks docs/images.md:\n  - "
                + String.join("\n  - ", problems));
    }

    @Test
    void image_printsItsUsage() throws Exception {
        ImageFixture.Help help = image().help();
        assertEquals(0, help.exitCode(), () -> "--help: " + help.output());
        assertTrue(help.firstLine().startsWith(image().expected().usage()),
                () -> "--help's first line is '" + help.firstLine() + "', expected '" + image().expected().usage() + "…'");
    }

    @Test
    void image_sizesTheHeapFromTheContainersMemoryLimit() throws Exception {
        ImageFixture.Jvm jvm = image().jvmUnderMemoryLimit(LIMIT_BYTES);
        assertEquals(LIMIT_BYTES * 3 / 4, jvm.maxHeapBytes(), "MaxHeapSize: MaxRAMPercentage=75 of the limit");
        assertEquals(LIMIT_BYTES / 2, jvm.initialHeapBytes(), "InitialHeapSize: InitialRAMPercentage=50 of the limit");
        assertTrue(jvm.g1(), "G1, though 512 MB alone would get the serial collector");
        assertTrue(jvm.containerSupport(), "UseContainerSupport");
        assertTrue(jvm.exitOnOutOfMemory(), "ExitOnOutOfMemoryError");
    }
}
