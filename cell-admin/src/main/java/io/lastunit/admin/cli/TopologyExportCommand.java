package io.lastunit.admin.cli;

import io.lastunit.api.topology.v1.ExportedCell;
import io.lastunit.api.topology.v1.TopologyExport;
import io.lastunit.common.Failure;
import io.lastunit.common.topology.RestorePlan;
import io.lastunit.common.topology.TopologyBackup;
import io.lastunit.common.topology.TopologyExports;
import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code lastunit admin topology export [--out FILE]}: every durable znode that defines routing —
 * cells and their shards, tenants with their epochs, moves with their versions — as one canonical
 * JSON document with a digest (TopologyExports). Ephemeral znodes (live shards, the balancer's
 * latch and endpoint, move leases) are left out. The namespace is read twice and written only when
 * both reads agree, and the file is replaced atomically, so a backup is never half a topology.
 */
@Command(name = "export", mixinStandardHelpOptions = true,
        description = {"Write the topology as a JSON document with a digest, to restore with 'topology import'.",
                "The same topology always gives the same bytes, so two backups compare with diff or by digest.",
                "Exit: 0 written, 1 written but the topology breaks a rule (import would refuse it; the"
                        + " problems are listed) or a znode is not a lastunit value (nothing written),"
                        + " 2 bad options, 3 ZooKeeper unreachable."})
public final class TopologyExportCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @ParentCommand
    TopologyCommand topology;

    @Option(names = "--out", paramLabel = "FILE",
            description = "Write the document here, replacing the file atomically (default: standard output).")
    File out;

    @Override
    public Integer call() {
        PrintWriter stdout = spec.commandLine().getOut();
        if (out != null && out.isDirectory()) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--out " + out + " is a directory");
        }
        try (ZooKeeperSession zk = topology.admin().connect()) {
            RestorePlan.Image image = read(zk);
            TopologyExport doc = TopologyExports.seal(image.content(), zk.namespace());
            String json = TopologyExports.toJson(doc);
            if (out == null) {
                stdout.print(json);
            } else {
                write(out.toPath(), json);
                int shards = doc.getCellsList().stream().mapToInt(ExportedCell::getShardsCount).sum();
                stdout.printf("exported %s at %s to %s: %d cell(s) with %d shard(s), %d tenant(s), %d move(s)%n",
                        zk.namespace(), zk.connect(), out, doc.getCellsCount(), shards, doc.getTenantsCount(),
                        doc.getMovesCount());
                stdout.printf("not exported (ephemeral): %d live shard registration(s), %d move lease(s)%n",
                        image.live().size(), image.leases().size());
                stdout.println("digest " + doc.getDigest());
            }
            stdout.flush();
            List<String> problems = TopologyExports.problems(doc);
            if (!problems.isEmpty()) {
                throw CliError.failed("the topology under " + zk.namespace() + " breaks " + problems.size()
                        + " rule(s), so an import would refuse this document until it is fixed: "
                        + String.join("; ", problems));
            }
            return ExitCodes.OK;
        }
    }

    /** The namespace's image, every failure as a CliError. */
    static RestorePlan.Image read(ZooKeeperSession zk) {
        try {
            return new TopologyBackup(zk.client(), zk.namespace()).read();
        } catch (Failure f) {
            throw CliError.unreachable("ZooKeeper at " + zk.connect() + ": " + f.getMessage());
        } catch (IllegalStateException | ConcurrentModificationException e) {
            throw CliError.failed(e.getMessage());
        }
    }

    /** Writes next to {@code target}, then renames over it: a reader sees the old file or the whole new one. */
    private static void write(Path target, String text) {
        Path dir = target.toAbsolutePath().getParent();
        Path tmp = null;
        try {
            tmp = Files.createTempFile(dir, "." + target.getFileName() + ".", ".tmp");
            Files.writeString(tmp, text, StandardCharsets.UTF_8);
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            if (tmp != null) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            throw CliError.usage("--out " + target + ": cannot write: " + e);
        }
    }
}
