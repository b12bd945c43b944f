package io.lastunit.shard.store.local;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * The end of a log file, for error messages: the last lines of a server's log, or what one
 * command appended to a command log. Reads at most {@link #BYTES_MAX} bytes, never throws (an
 * unreadable file is described instead), because it runs on paths that are already failing.
 *
 * <p>Stateless, thread-safe. Hazard: a line cut at the start of the window is shown cut.
 */
final class FileTail {
    /** The most that is read from the end of a file. */
    static final int BYTES_MAX = 16 * 1024;

    private FileTail() {
    }

    /** The last {@code lines} lines of {@code file}, or a sentence saying why there are none. */
    static String lastLines(Path file, int lines) {
        try {
            long size = Files.size(file);
            String text = read(file, Math.max(0, size - BYTES_MAX), size);
            List<String> all = Arrays.asList(text.split("\\R"));
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (NoSuchFileException e) {
            return "(" + file + " does not exist)";
        } catch (IOException e) {
            return "(could not read " + file + ": " + e + ")";
        }
    }

    /** What {@code file} holds after byte {@code offset}: the last {@link #BYTES_MAX} bytes of it at most. */
    static String since(Path file, long offset) {
        try {
            long size = Files.size(file);
            return read(file, Math.max(offset, size - BYTES_MAX), size);
        } catch (NoSuchFileException e) {
            return "";
        } catch (IOException e) {
            return "(could not read " + file + ": " + e + ")";
        }
    }

    /** The size of {@code file}, 0 when it does not exist. */
    static long size(Path file) {
        try {
            return Files.size(file);
        } catch (IOException e) {
            return 0;
        }
    }

    private static String read(Path file, long from, long to) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate((int) Math.max(0, Math.min(BYTES_MAX, to - from)));
        try (SeekableByteChannel channel = Files.newByteChannel(file)) {
            channel.position(from);
            while (buffer.hasRemaining() && channel.read(buffer) > 0) {
                // reads until the window is full or the file ends
            }
        }
        return new String(buffer.array(), 0, buffer.position(), StandardCharsets.UTF_8);
    }
}
