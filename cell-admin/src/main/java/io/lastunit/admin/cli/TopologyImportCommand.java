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
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code lastunit admin topology import --in FILE}: writes an exported topology into ZooKeeper.
 * The whole document is checked before anything is written; an invalid one is refused naming the
 * field. It refuses a namespace that holds a different topology unless {@code --force}, and any
 * namespace where a mover holds a move. Epochs and move versions are written at
 * {@code max(here, document) + --epoch-bump}, so no fencing token goes back (RestorePlan). One
 * ZooKeeper transaction when it fits in {@code --transaction-bytes-max}; otherwise several, with
 * no cell from the first to the last. Afterwards it reads the namespace back and compares.
 */
@Command(name = "import", mixinStandardHelpOptions = true,
        description = {"Restore a topology from a document 'topology export' wrote.",
                "Checks the whole document first (nothing is written if any field is wrong), refuses a namespace"
                        + " that holds a different topology unless --force, writes in one ZooKeeper transaction when"
                        + " it fits, and raises every epoch and move version past what it was.",
                "Stop every mover (admin servers, 'tenants move --wait', 'moves resume') first.",
                "Exit: 0 imported (or already there; --dry-run: would import), 1 a concurrent change or a"
                        + " partial import (the message says what to do), 2 invalid document or refused,"
                        + " 3 ZooKeeper unreachable (the outcome may be unknown: run it again)."})
public final class TopologyImportCommand implements Callable<Integer> {
    /** Larger than any topology a ZooKeeper ensemble holds with lastunit's znode sizes. */
    static final long DOCUMENT_BYTES_MAX = 64L * 1024 * 1024;
    /** Lines of changes printed before "... and N more". */
    static final int LINES_MAX = 40;

    @Spec
    CommandSpec spec;

    @ParentCommand
    TopologyCommand topology;

    @Option(names = "--in", required = true, paramLabel = "FILE",
            description = "The document to import; - reads it from standard input.")
    File in;

    /** Where {@code --in -} reads from; tests set it. */
    java.io.InputStream stdin = System.in;

    @Option(names = "--dry-run", description = "Check the document and print what would be written; write nothing.")
    boolean dryRun;

    @Option(names = "--force",
            description = "Write the document over a namespace that holds a different topology (tenants and moves"
                    + " it does not name are kept: deleting one would restart its epoch); over one that holds"
                    + " this very topology, raise every epoch and move version by --epoch-bump.")
    boolean force;

    @Option(names = "--epoch-bump", paramLabel = "N",
            description = "How far past max(here, document) each tenant epoch and move version goes, 0.."
                    + RestorePlan.EPOCH_BUMP_MAX + " (default ${DEFAULT-VALUE}): more than the writes a znode"
                    + " may have had after the export was taken. 0 only restores the document's exact versions.")
    int epochBump = 1;

    @Option(names = "--transaction-bytes-max", paramLabel = "BYTES",
            description = "Largest ZooKeeper transaction to send, " + RestorePlan.TRANSACTION_BYTES_MIN + ".."
                    + RestorePlan.TRANSACTION_BYTES_LIMIT + " (default ${DEFAULT-VALUE}, under ZooKeeper's default"
                    + " jute.maxbuffer of 1,048,575; raise both together).")
    int transactionBytesMax = RestorePlan.TRANSACTION_BYTES_MAX_DEFAULT;

    @Override
    public Integer call() {
        validate();
        TopologyExport doc = readDocument();
        PrintWriter out = spec.commandLine().getOut();
        try (ZooKeeperSession zk = topology.admin().connect()) {
            RestorePlan.Image here = TopologyExportCommand.read(zk);
            if (!here.leases().isEmpty()) {
                throw CliError.usage("refused, nothing written: movers hold moves under " + zk.namespace() + " "
                        + leases(here.leases()) + "; stop every mover (admin servers, 'tenants move --wait',"
                        + " 'moves resume') first: a mover acting on the old topology would write over the restored one");
            }
            RestorePlan plan;
            try {
                plan = RestorePlan.of(zk.namespace(), here, doc, epochBump, transactionBytesMax, force);
            } catch (IllegalStateException e) {
                throw CliError.usage("refused, nothing written: " + e.getMessage());
            }
            String what = in + " (" + doc.getDigest() + ", " + doc.getCellsCount() + " cell(s), "
                    + doc.getTenantsCount() + " tenant(s), " + doc.getMovesCount() + " move(s), exported from "
                    + doc.getNamespace() + ")";
            if (plan.isNoop()) {
                out.println(zk.namespace() + " at " + zk.connect() + " already holds " + what + ": nothing to write"
                        + (force ? "" : " (--force writes it all the same, raising every epoch by --epoch-bump)"));
                out.flush();
                return ExitCodes.OK;
            }
            if (plan.overwrites() && !force) {
                List<String> d = plan.differences();
                throw CliError.usage("refused, nothing written: " + zk.namespace() + " at " + zk.connect()
                        + " holds a different topology (" + d.size() + " difference(s): "
                        + String.join("; ", d.subList(0, Math.min(d.size(), 10)))
                        + (d.size() > 10 ? "; ..." : "") + "); --force writes the document over it");
            }
            int writes = plan.transactions().stream().mapToInt(t -> t.ops().size()).sum();
            int bytes = plan.transactions().stream().mapToInt(RestorePlan.Transaction::bytes).max().orElse(0);
            out.printf("import %s%n  into %s at %s: %d transaction(s), %d write(s), largest about %d bytes"
                    + " (bound %d); epochs and move versions at max(here, document) + %d%n", what, zk.namespace(),
                    zk.connect(), plan.transactions().size(), writes, bytes, transactionBytesMax, epochBump);
            lines(out, "writes", plan.changes());
            lines(out, "keeps (not in the document)", plan.kept());
            if (dryRun) {
                out.println("dry run: nothing written");
                out.flush();
                return ExitCodes.OK;
            }
            out.flush();
            RestorePlan.Image after;
            try {
                after = new TopologyBackup(zk.client(), zk.namespace()).apply(plan, line -> {
                    out.println("  " + line);
                    out.flush();
                });
            } catch (Failure f) {
                throw CliError.unreachable("ZooKeeper at " + zk.connect() + ": " + f.getMessage()
                        + "; run the same import again (with --force if it is refused as a different topology)");
            } catch (ConcurrentModificationException | IllegalStateException e) {
                throw CliError.failed(e.getMessage() + "; see what is there with 'topology export', then run the"
                        + " import again (with --force)");
            }
            TopologyExport now = TopologyExports.seal(after.content(), zk.namespace());
            int shards = now.getCellsList().stream().mapToInt(ExportedCell::getShardsCount).sum();
            out.printf("imported: %s now holds %d cell(s) with %d shard(s), %d tenant(s), %d move(s); digest %s%n",
                    zk.namespace(), now.getCellsCount(), shards, now.getTenantsCount(), now.getMovesCount(),
                    now.getDigest());
            if (!now.getDigest().equals(doc.getDigest())) {
                out.println("the epochs moved on: export again to keep a backup of the topology as it is now");
            }
            out.flush();
            return ExitCodes.OK;
        }
    }

    private void validate() {
        if (epochBump < 0 || epochBump > RestorePlan.EPOCH_BUMP_MAX) {
            throw new ParameterException(spec.commandLine(), "--epoch-bump " + epochBump + " is outside 0.."
                    + RestorePlan.EPOCH_BUMP_MAX);
        }
        if (transactionBytesMax < RestorePlan.TRANSACTION_BYTES_MIN
                || transactionBytesMax > RestorePlan.TRANSACTION_BYTES_LIMIT) {
            throw new ParameterException(spec.commandLine(), "--transaction-bytes-max " + transactionBytesMax
                    + " is outside " + RestorePlan.TRANSACTION_BYTES_MIN + ".." + RestorePlan.TRANSACTION_BYTES_LIMIT);
        }
    }

    /** The document, parsed and checked; every problem refuses it before ZooKeeper is asked anything. */
    private TopologyExport readDocument() {
        String json;
        try {
            if (in.getPath().equals("-")) {
                byte[] bytes = stdin.readNBytes((int) DOCUMENT_BYTES_MAX + 1);
                if (bytes.length > DOCUMENT_BYTES_MAX) {
                    throw CliError.usage("--in -: more than a topology document may have (" + DOCUMENT_BYTES_MAX
                            + " bytes)");
                }
                json = new String(bytes, StandardCharsets.UTF_8);
            } else if (!in.isFile()) {
                throw CliError.usage("--in " + in + ": no such file");
            } else if (in.length() > DOCUMENT_BYTES_MAX) {
                throw CliError.usage("--in " + in + ": " + in.length() + " bytes, more than a topology document may"
                        + " have (" + DOCUMENT_BYTES_MAX + ")");
            } else {
                json = Files.readString(in.toPath(), StandardCharsets.UTF_8);
            }
        } catch (IOException e) {
            throw CliError.usage("--in " + in + ": cannot read: " + e);
        }
        TopologyExport doc;
        try {
            doc = TopologyExports.parse(json);
        } catch (IllegalArgumentException e) {
            throw CliError.usage(in + " is refused, nothing written: " + e.getMessage());
        }
        List<String> problems = TopologyExports.problems(doc);
        if (!problems.isEmpty()) {
            throw CliError.usage(in + " is refused, nothing written: " + String.join("; ", problems));
        }
        return doc;
    }

    private static String leases(Map<String, String> leases) {
        StringBuilder sb = new StringBuilder();
        leases.forEach((move, owner) -> sb.append(sb.length() == 0 ? "" : ", ").append(move).append(" (")
                .append(owner).append(')'));
        return sb.toString();
    }

    private static void lines(PrintWriter out, String title, List<String> lines) {
        if (lines.isEmpty()) {
            return;
        }
        out.println("  " + title + ":");
        for (int i = 0; i < Math.min(lines.size(), LINES_MAX); i++) {
            out.println("    " + lines.get(i));
        }
        if (lines.size() > LINES_MAX) {
            out.println("    ... and " + (lines.size() - LINES_MAX) + " more");
        }
    }
}
