package io.lastunit.testkit.image;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.BufferedInputStream;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.zip.GZIPInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;

/**
 * A container image as Jib's {@code buildTar} writes it, in the {@code docker save} format: a
 * {@code manifest.json} naming one config and its layers (gzip or plain tars), all in one tar.
 * Reading it checks the format (one image, every layer present) and computes each layer's digest,
 * so {@link #layerDigestProblems()} can compare them with the config's {@code diff_ids}.
 *
 * <p>Immutable after {@link #read}, so thread-safe. Hazard: it holds every layer in memory (an
 * image here is about 100 MB); read one image at a time.
 */
public final class ImageTarball {
    /** Larger than any lastunit image: a tar bigger than this is refused rather than read into memory. */
    static final long SIZE_MAX_BYTES = 1L << 30;

    private final Path path;
    private final String tag;
    private final JsonObject config;
    private final List<Layer> layers;
    private final Map<String, FileEntry> files;

    /** One layer: its name in the tar, its content uncompressed, and that content's digest. */
    record Layer(String name, byte[] tar, String digest) {
    }

    /**
     * A file, directory or link in the image's file tree (later layers win).
     *
     * @param path     absolute, normalized ({@code /opt/java/openjdk/bin/java})
     * @param mode     permission bits with setuid, setgid and sticky ({@code 01777} for /tmp)
     * @param linkName a symbolic link's target (or a hard link's), else empty
     */
    public record FileEntry(String path, Type type, int mode, long uid, long gid, String linkName, long size) {
        public enum Type { FILE, DIRECTORY, SYMLINK, HARDLINK, OTHER }
    }

    private ImageTarball(Path path, String tag, JsonObject config, List<Layer> layers, Map<String, FileEntry> files) {
        this.path = path;
        this.tag = tag;
        this.config = config;
        this.layers = layers;
        this.files = files;
    }

    /** Reads the tarball at {@code path}; a malformed one throws {@link IOException} saying what is wrong. */
    public static ImageTarball read(Path path) throws IOException {
        if (!Files.isRegularFile(path)) {
            throw new IOException(path + " does not exist: build it with -Pimage-tar (docs/images.md)");
        }
        if (Files.size(path) > SIZE_MAX_BYTES) {
            throw new IOException(path + " is " + Files.size(path) + " bytes, more than " + SIZE_MAX_BYTES);
        }
        Map<String, byte[]> entries = new LinkedHashMap<>();
        try (TarArchiveInputStream tar = new TarArchiveInputStream(new BufferedInputStream(Files.newInputStream(path)))) {
            for (TarArchiveEntry e = tar.getNextEntry(); e != null; e = tar.getNextEntry()) {
                if (e.isFile()) {
                    entries.put(e.getName(), tar.readAllBytes());
                }
            }
        }
        byte[] manifestBytes = entries.get("manifest.json");
        if (manifestBytes == null) {
            throw new IOException(path + " has no manifest.json: not a docker-save tarball; entries " + entries.keySet());
        }
        JsonArray manifest = JsonParser.parseString(new String(manifestBytes, StandardCharsets.UTF_8)).getAsJsonArray();
        if (manifest.size() != 1) {
            throw new IOException(path + ": manifest.json holds " + manifest.size() + " images, expected 1");
        }
        JsonObject image = manifest.get(0).getAsJsonObject();
        JsonArray tags = image.has("RepoTags") && !image.get("RepoTags").isJsonNull()
                ? image.getAsJsonArray("RepoTags") : new JsonArray();
        if (tags.size() != 1) {
            throw new IOException(path + ": the image has tags " + tags + ", expected exactly one");
        }
        String configName = image.get("Config").getAsString();
        byte[] configBytes = entries.get(configName);
        if (configBytes == null) {
            throw new IOException(path + ": the config " + configName + " named in manifest.json is not in the tar");
        }
        JsonObject config = JsonParser.parseString(new String(configBytes, StandardCharsets.UTF_8)).getAsJsonObject();
        List<Layer> layers = new ArrayList<>();
        for (JsonElement l : image.getAsJsonArray("Layers")) {
            byte[] blob = entries.get(l.getAsString());
            if (blob == null) {
                throw new IOException(path + ": layer " + l.getAsString() + " is named in manifest.json but not in the tar");
            }
            byte[] plain = isGzip(blob) ? new GZIPInputStream(new ByteArrayInputStream(blob)).readAllBytes() : blob;
            layers.add(new Layer(l.getAsString(), plain, "sha256:" + sha256(plain)));
        }
        Map<String, FileEntry> files = new LinkedHashMap<>();
        for (Layer layer : layers) {
            readTree(layer, files);
        }
        return new ImageTarball(path, tags.get(0).getAsString(), config, List.copyOf(layers),
                Collections.unmodifiableMap(files));
    }

    private static void readTree(Layer layer, Map<String, FileEntry> files) throws IOException {
        try (TarArchiveInputStream tar = new TarArchiveInputStream(new ByteArrayInputStream(layer.tar()))) {
            for (TarArchiveEntry e = tar.getNextEntry(); e != null; e = tar.getNextEntry()) {
                String p = absolute(e.getName());
                if (p.substring(p.lastIndexOf('/') + 1).startsWith(".wh.")) {
                    throw new IOException(layer.name() + ": whiteout " + p + " (a lastunit image deletes nothing)");
                }
                FileEntry.Type type = e.isSymbolicLink() ? FileEntry.Type.SYMLINK
                        : e.isLink() ? FileEntry.Type.HARDLINK
                        : e.isDirectory() ? FileEntry.Type.DIRECTORY
                        : e.isFile() ? FileEntry.Type.FILE : FileEntry.Type.OTHER;
                files.put(p, new FileEntry(p, type, e.getMode() & 07777, e.getLongUserId(), e.getLongGroupId(),
                        e.getLinkName() == null ? "" : e.getLinkName(), e.getSize()));
            }
        }
    }

    /** A tar entry's name ({@code ./opt/x}, {@code opt/x/}) as an absolute path ({@code /opt/x}). */
    static String absolute(String name) {
        String p = Path.of("/").resolve(name).normalize().toString();
        return p.isEmpty() ? "/" : p;
    }

    private static boolean isGzip(byte[] b) {
        return b.length > 2 && (b[0] & 0xff) == 0x1f && (b[1] & 0xff) == 0x8b;
    }

    private static String sha256(byte[] b) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JRE has SHA-256", e);
        }
    }

    public Path path() {
        return path;
    }

    /** The one tag, {@code ghcr.io/lastunit/lastunit-router:0.1.0-SNAPSHOT}. */
    public String tag() {
        return tag;
    }

    /** The image name in the tag: {@code lastunit-router}. */
    public String name() {
        String last = tag.substring(tag.lastIndexOf('/') + 1);
        return last.contains(":") ? last.substring(0, last.indexOf(':')) : last;
    }

    public String os() {
        return string(config, "os");
    }

    public String architecture() {
        return string(config, "architecture");
    }

    public String created() {
        return string(config, "created");
    }

    public String user() {
        return string(containerConfig(), "User");
    }

    public List<String> entrypoint() {
        return strings(containerConfig(), "Entrypoint");
    }

    /** The default arguments ({@code Cmd}); empty when there are none. */
    public List<String> cmd() {
        return strings(containerConfig(), "Cmd");
    }

    /** The environment, in the image's order. */
    public Map<String, String> env() {
        Map<String, String> env = new LinkedHashMap<>();
        for (String e : strings(containerConfig(), "Env")) {
            int eq = e.indexOf('=');
            env.put(eq < 0 ? e : e.substring(0, eq), eq < 0 ? "" : e.substring(eq + 1));
        }
        return env;
    }

    /** The exposed ports as written, {@code 7443/tcp}. */
    public TreeSet<String> exposedPorts() {
        JsonObject c = containerConfig();
        TreeSet<String> ports = new TreeSet<>();
        if (c.has("ExposedPorts") && c.get("ExposedPorts").isJsonObject()) {
            ports.addAll(c.getAsJsonObject("ExposedPorts").keySet());
        }
        return ports;
    }

    public Map<String, String> labels() {
        JsonObject c = containerConfig();
        Map<String, String> labels = new LinkedHashMap<>();
        if (c.has("Labels") && c.get("Labels").isJsonObject()) {
            c.getAsJsonObject("Labels").entrySet().forEach(e -> labels.put(e.getKey(), e.getValue().getAsString()));
        }
        return labels;
    }

    /** Each layer whose content does not match its {@code diff_id}, or a count that differs; empty when all match. */
    public List<String> layerDigestProblems() {
        List<String> problems = new ArrayList<>();
        List<String> diffIds = strings(config.getAsJsonObject("rootfs"), "diff_ids");
        if (diffIds.size() != layers.size()) {
            problems.add(layers.size() + " layers but " + diffIds.size() + " diff_ids in the config");
        }
        for (int i = 0; i < Math.min(diffIds.size(), layers.size()); i++) {
            if (!layers.get(i).digest().equals(diffIds.get(i))) {
                problems.add("layer " + layers.get(i).name() + " is " + layers.get(i).digest() + ", the config says "
                        + diffIds.get(i));
            }
        }
        return problems;
    }

    public int layerCount() {
        return layers.size();
    }

    /** Every entry of the merged file tree, by absolute path. */
    public Map<String, FileEntry> files() {
        return files;
    }

    /** The entry at {@code path}, following symbolic and hard links inside the image; empty if absent. */
    public Optional<FileEntry> resolve(String path) {
        String p = absolute(path);
        for (int hops = 0; hops <= 16; hops++) {
            FileEntry e = files.get(p);
            if (e == null) {
                return Optional.empty();
            }
            switch (e.type()) {
                case SYMLINK -> p = absolute(e.linkName().startsWith("/") ? e.linkName()
                        : Path.of(p).getParent().resolve(e.linkName()).toString());
                case HARDLINK -> p = absolute(e.linkName());
                default -> {
                    return Optional.of(e);
                }
            }
        }
        return Optional.empty();
    }

    /** The content of the regular file at {@code path} (the last layer that has it). */
    public byte[] readFile(String path) throws IOException {
        String p = resolve(path).orElseThrow(() -> new IOException(path + " is not in " + this.path)).path();
        for (int i = layers.size() - 1; i >= 0; i--) {
            try (TarArchiveInputStream tar = new TarArchiveInputStream(new ByteArrayInputStream(layers.get(i).tar()))) {
                for (TarArchiveEntry e = tar.getNextEntry(); e != null; e = tar.getNextEntry()) {
                    if (e.isFile() && absolute(e.getName()).equals(p)) {
                        return tar.readAllBytes();
                    }
                }
            }
        }
        throw new IOException(p + " is not a regular file in " + this.path);
    }

    /** Each layer's uncompressed tar, in order, for unpacking. */
    List<InputStream> layerStreams() {
        return layers.stream().map(l -> (InputStream) new ByteArrayInputStream(l.tar())).toList();
    }

    private JsonObject containerConfig() {
        return config.has("config") && config.get("config").isJsonObject() ? config.getAsJsonObject("config") : new JsonObject();
    }

    private static String string(JsonObject o, String key) {
        return o.has(key) && !o.get(key).isJsonNull() ? o.get(key).getAsString() : "";
    }

    private static List<String> strings(JsonObject o, String key) {
        if (o == null || !o.has(key) || o.get(key).isJsonNull()) {
            return List.of();
        }
        List<String> out = new ArrayList<>();
        o.getAsJsonArray(key).forEach(e -> out.add(e.getAsString()));
        return List.copyOf(out);
    }

    @Override
    public String toString() {
        return tag + " (" + path + ", " + layers.size() + " layers)";
    }
}
