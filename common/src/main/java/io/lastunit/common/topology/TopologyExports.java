package io.lastunit.common.topology;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.ListValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import com.google.protobuf.util.JsonFormat;
import io.lastunit.api.topology.v1.Cell;
import io.lastunit.api.topology.v1.ExportedCell;
import io.lastunit.api.topology.v1.ExportedMove;
import io.lastunit.api.topology.v1.ExportedTenant;
import io.lastunit.api.topology.v1.Move;
import io.lastunit.api.topology.v1.MoveStep;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.api.topology.v1.TenantPlacement;
import io.lastunit.api.topology.v1.TenantState;
import io.lastunit.api.topology.v1.TopologyExport;
import io.lastunit.common.Limits;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The topology export document ({@code proto/.../export.proto}): its canonical form, its JSON, its
 * digest and its rules. Pure: no I/O, no clock; stateless and thread-safe.
 *
 * <p>Canonical: every list sorted by name (cells, each cell's shards, tenants, moves) and printed
 * with every field, so one topology is always the same bytes and two exports compare with
 * {@code diff}. The digest is over the canonical content, not the file's bytes, so reordering a
 * list by hand does not change it, and any other edit does.
 *
 * <p>Hazard: {@link #parse} is strict (an unknown field is an error, not ignored as the topology
 * readers ignore one): an import must never drop a field it does not understand and write the
 * rest as if it were the whole topology.
 */
public final class TopologyExports {
    public static final String FORMAT = "lastunit-topology";
    public static final int FORMAT_VERSION = 1;
    private static final String DIGEST_PREFIX = "sha256:";

    private static final JsonFormat.Printer PRETTY =
            JsonFormat.printer().preservingProtoFieldNames().alwaysPrintFieldsWithNoPresence();
    private static final JsonFormat.Printer COMPACT = PRETTY.omittingInsignificantWhitespace();
    private static final JsonFormat.Parser STRICT = JsonFormat.parser();

    private TopologyExports() {
    }

    /** The document with every list sorted; format, version, namespace and digest untouched. */
    public static TopologyExport canonical(TopologyExport doc) {
        List<ExportedCell> cells = new ArrayList<>();
        for (ExportedCell c : doc.getCellsList()) {
            List<ShardInfo> shards = new ArrayList<>(c.getShardsList());
            shards.sort(Comparator.comparing(ShardInfo::getShardId));
            cells.add(c.toBuilder().clearShards().addAllShards(shards).build());
        }
        cells.sort(Comparator.comparing(c -> c.getCell().getName()));
        List<ExportedTenant> tenants = new ArrayList<>(doc.getTenantsList());
        tenants.sort(Comparator.comparing(t -> t.getPlacement().getTenantId()));
        List<ExportedMove> moves = new ArrayList<>(doc.getMovesList());
        moves.sort(Comparator.comparing(m -> m.getMove().getMoveId()));
        return doc.toBuilder().clearCells().addAllCells(cells).clearTenants().addAllTenants(tenants)
                .clearMoves().addAllMoves(moves).build();
    }

    /**
     * The topology itself: canonical cells, tenants and moves, without format, version, namespace
     * and digest. Two documents describe the same topology exactly when their contents are equal.
     */
    public static TopologyExport content(TopologyExport doc) {
        return canonical(doc).toBuilder().clearFormat().clearFormatVersion().clearNamespace().clearDigest().build();
    }

    /** True when the document holds no cell, tenant or move. */
    public static boolean isEmpty(TopologyExport doc) {
        return doc.getCellsCount() == 0 && doc.getTenantsCount() == 0 && doc.getMovesCount() == 0;
    }

    /** A complete document: this format and version, {@code namespace}, canonical, with its digest. */
    public static TopologyExport seal(TopologyExport content, String namespace) {
        TopologyExport doc = canonical(content).toBuilder().setFormat(FORMAT).setFormatVersion(FORMAT_VERSION)
                .setNamespace(namespace).clearDigest().build();
        return doc.toBuilder().setDigest(digest(doc)).build();
    }

    /**
     * {@code sha256:} and the hex SHA-256 of the canonical document printed compactly with an empty
     * digest field.
     */
    public static String digest(TopologyExport doc) {
        byte[] bytes = print(COMPACT, canonical(doc).toBuilder().clearDigest().build()).getBytes(StandardCharsets.UTF_8);
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256").digest(bytes);
            StringBuilder sb = new StringBuilder(DIGEST_PREFIX);
            for (byte b : hash) {
                sb.append(Character.forDigit((b >> 4) & 0xF, 16)).append(Character.forDigit(b & 0xF, 16));
            }
            return sb.toString();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }

    /** The canonical document as pretty JSON, ending with a newline. */
    public static String toJson(TopologyExport doc) {
        return print(PRETTY, canonical(doc)) + "\n";
    }

    private static String print(JsonFormat.Printer printer, TopologyExport doc) {
        try {
            return printer.print(doc);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("cannot print a TopologyExport", e); // only Any fields fail; it has none
        }
    }

    /**
     * Parses a document, strictly: its format and version first, then every field.
     *
     * @throws IllegalArgumentException naming the field (as a path such as
     *     {@code tenants[3].placement.cell}) and what is wrong with it
     */
    public static TopologyExport parse(String json) {
        Value tree;
        try {
            Value.Builder b = Value.newBuilder();
            STRICT.merge(json, b);
            tree = b.build();
        } catch (InvalidProtocolBufferException | RuntimeException e) {
            throw new IllegalArgumentException("not JSON: " + e.getMessage());
        }
        if (!tree.hasStructValue()) {
            throw new IllegalArgumentException("the document is not a JSON object");
        }
        Map<String, Value> top = tree.getStructValue().getFieldsMap();
        Value format = top.get("format");
        if (format == null || !format.hasStringValue() || !format.getStringValue().equals(FORMAT)) {
            throw new IllegalArgumentException("format: " + (format == null ? "missing" : show(format))
                    + ", expected \"" + FORMAT + "\" (is this a lastunit topology export?)");
        }
        Value version = top.get("format_version");
        if (version == null || !version.hasNumberValue() || version.getNumberValue() != FORMAT_VERSION) {
            throw new IllegalArgumentException("format_version: " + (version == null ? "missing" : show(version))
                    + "; this lastunit reads version " + FORMAT_VERSION + " (a newer lastunit wrote it?)");
        }
        TopologyExport.Builder doc = TopologyExport.newBuilder();
        try {
            STRICT.merge(json, doc);
        } catch (InvalidProtocolBufferException | RuntimeException e) {
            String where = locate(tree, TopologyExport.getDescriptor(), "");
            throw new IllegalArgumentException(where != null ? where : e.getMessage());
        }
        return doc.build();
    }

    private static String show(Value v) {
        if (v.hasNumberValue() && v.getNumberValue() == Math.rint(v.getNumberValue())
                && Math.abs(v.getNumberValue()) < 1e15) {
            return String.valueOf((long) v.getNumberValue());
        }
        try {
            return JsonFormat.printer().omittingInsignificantWhitespace().print(v);
        } catch (InvalidProtocolBufferException e) {
            return v.toString();
        }
    }

    /**
     * Finds the first field of {@code v} that does not parse as {@code type}: the document failed
     * to parse as a whole, and the parser's own message does not say where.
     */
    private static String locate(Value v, Descriptor type, String path) {
        if (!v.hasStructValue()) {
            return (path.isEmpty() ? "the document" : path) + ": " + show(v) + " is not an object (a "
                    + type.getName() + ")";
        }
        for (Map.Entry<String, Value> e : v.getStructValue().getFieldsMap().entrySet()) {
            String at = path.isEmpty() ? e.getKey() : path + "." + e.getKey();
            FieldDescriptor f = type.findFieldByName(e.getKey());
            if (f == null) {
                f = type.getFields().stream().filter(x -> x.getJsonName().equals(e.getKey())).findFirst().orElse(null);
            }
            if (f == null) {
                return at + ": no such field in " + type.getName() + " (its fields: "
                        + type.getFields().stream().map(FieldDescriptor::getName).collect(Collectors.joining(", "))
                        + ")";
            }
            Value val = e.getValue();
            if (f.getJavaType() == FieldDescriptor.JavaType.MESSAGE && !val.hasNullValue()) {
                if (f.isRepeated()) {
                    if (!val.hasListValue()) {
                        return at + ": " + show(val) + " is not a list";
                    }
                    ListValue list = val.getListValue();
                    for (int i = 0; i < list.getValuesCount(); i++) {
                        String p = locate(list.getValues(i), f.getMessageType(), at + "[" + i + "]");
                        if (p != null) {
                            return p;
                        }
                    }
                } else {
                    String p = locate(val, f.getMessageType(), at);
                    if (p != null) {
                        return p;
                    }
                }
                continue;
            }
            Value alone = Value.newBuilder().setStructValue(Struct.newBuilder().putFields(e.getKey(), val)).build();
            try {
                STRICT.merge(show(alone), com.google.protobuf.DynamicMessage.newBuilder(type));
            } catch (InvalidProtocolBufferException | RuntimeException ex) {
                return at + ": " + show(val) + ": " + ex.getMessage();
            }
        }
        return null;
    }

    /**
     * Every rule of a document an import would break, each naming its field; empty when it may be
     * imported. The store's rules (names, one shard id per platform, every region of a cell served,
     * a placement in a known cell, a move named only by its own tenant) and the digest.
     */
    public static List<String> problems(TopologyExport doc) {
        List<String> problems = new ArrayList<>();
        if (!doc.getFormat().equals(FORMAT)) {
            problems.add("format: \"" + doc.getFormat() + "\", expected \"" + FORMAT + "\"");
        }
        if (doc.getFormatVersion() != FORMAT_VERSION) {
            problems.add("format_version: " + doc.getFormatVersion() + "; this lastunit reads " + FORMAT_VERSION);
        }
        if (!doc.getNamespace().matches("(/[\\x21-\\x2E\\x30-\\x7E]+)+")) {
            problems.add("namespace: \"" + doc.getNamespace() + "\" is not a znode path like /lastunit");
        }
        String computed = digest(doc);
        if (!doc.getDigest().equals(computed)) {
            problems.add("digest: \"" + doc.getDigest() + "\" does not match the content (" + computed
                    + "): the document was changed or cut after its export (if you edited it on purpose, put"
                    + " that digest in)");
        }
        Map<String, Cell> cells = new HashMap<>();
        Map<String, String> cellOfShard = new HashMap<>();
        for (int i = 0; i < doc.getCellsCount(); i++) {
            checkCell(problems, "cells[" + i + "]", doc.getCells(i), cells, cellOfShard);
        }
        Map<String, ExportedMove> moves = new HashMap<>();
        for (int i = 0; i < doc.getMovesCount(); i++) {
            String at = "moves[" + i + "]";
            ExportedMove em = doc.getMoves(i);
            Move m = em.getMove();
            if (!name(problems, at + ".move.move_id", m.getMoveId())) {
                continue;
            }
            if (moves.put(m.getMoveId(), em) != null) {
                problems.add(at + ".move.move_id: move " + m.getMoveId() + " appears twice");
            }
            name(problems, at + ".move.tenant_id", m.getTenantId());
            knownCell(problems, at + ".move.from_cell", m.getFromCell(), cells);
            knownCell(problems, at + ".move.to_cell", m.getToCell(), cells);
            if (m.getFromCell().equals(m.getToCell())) {
                problems.add(at + ".move: from_cell and to_cell are both " + m.getToCell());
            }
            if (m.getStep() == MoveStep.MOVE_STEP_UNSPECIFIED || m.getStep() == MoveStep.UNRECOGNIZED) {
                problems.add(at + ".move.step: " + m.getStep() + " is not a step of a move");
            }
            if (m.getPlannedEpoch() < 0) {
                problems.add(at + ".move.planned_epoch: " + m.getPlannedEpoch() + " is negative");
            }
            if (m.getFencedEpoch() < 0) {
                problems.add(at + ".move.fenced_epoch: " + m.getFencedEpoch() + " is negative");
            }
            if (em.getVersion() < 0) {
                problems.add(at + ".version: " + em.getVersion() + " is negative");
            }
        }
        Set<String> tenants = new HashSet<>();
        for (int i = 0; i < doc.getTenantsCount(); i++) {
            String at = "tenants[" + i + "]";
            ExportedTenant et = doc.getTenants(i);
            TenantPlacement p = et.getPlacement();
            if (name(problems, at + ".placement.tenant_id", p.getTenantId()) && !tenants.add(p.getTenantId())) {
                problems.add(at + ".placement.tenant_id: tenant " + p.getTenantId() + " appears twice");
            }
            knownCell(problems, at + ".placement.cell", p.getCell(), cells);
            if (p.getState() != TenantState.ACTIVE && p.getState() != TenantState.MOVING) {
                problems.add(at + ".placement.state: " + p.getState() + ", expected ACTIVE or MOVING");
            }
            if (p.getMoveId().isEmpty()) {
                if (p.getState() == TenantState.MOVING) {
                    problems.add(at + ".placement.move_id: empty, but a MOVING tenant names its move");
                }
            } else {
                ExportedMove m = moves.get(p.getMoveId());
                if (m == null) {
                    problems.add(at + ".placement.move_id: \"" + p.getMoveId() + "\" is not a move of the document");
                } else if (!m.getMove().getTenantId().equals(p.getTenantId())) {
                    problems.add(at + ".placement.move_id: move " + p.getMoveId() + " moves tenant "
                            + m.getMove().getTenantId() + ", not " + p.getTenantId());
                }
            }
            if (et.getEpoch() < 0) {
                problems.add(at + ".epoch: " + et.getEpoch() + " is negative");
            }
        }
        return problems;
    }

    private static void checkCell(List<String> problems, String at, ExportedCell ec, Map<String, Cell> cells,
            Map<String, String> cellOfShard) {
        Cell c = ec.getCell();
        if (!name(problems, at + ".cell.name", c.getName())) {
            return;
        }
        if (cells.put(c.getName(), c) != null) {
            problems.add(at + ".cell.name: cell " + c.getName() + " appears twice");
        }
        if (c.getRegionsCount() == 0) {
            problems.add(at + ".cell.regions: empty; a cell serves at least one region");
        }
        Set<String> regions = new HashSet<>();
        for (int r = 0; r < c.getRegionsCount(); r++) {
            String region = c.getRegions(r);
            if (name(problems, at + ".cell.regions[" + r + "]", region) && !regions.add(region)) {
                problems.add(at + ".cell.regions[" + r + "]: region " + region + " appears twice");
            }
        }
        if (c.getCreatedAtMs() < 0) {
            problems.add(at + ".cell.created_at_ms: " + c.getCreatedAtMs() + " is negative");
        }
        if (ec.getShardsCount() == 0) {
            if (!c.getName().equals(Topology.SHARED_CELL)) {
                problems.add(at + ".shards: cell " + c.getName() + " has none; only cell " + Topology.SHARED_CELL
                        + " may be without shards (before its shards are given)");
            }
            return;
        }
        Set<String> served = new HashSet<>();
        for (int s = 0; s < ec.getShardsCount(); s++) {
            String sat = at + ".shards[" + s + "]";
            ShardInfo shard = ec.getShards(s);
            if (name(problems, sat + ".shard_id", shard.getShardId())) {
                String other = cellOfShard.putIfAbsent(shard.getShardId(), c.getName());
                if (other != null) {
                    problems.add(sat + ".shard_id: shard " + shard.getShardId() + " is also in cell " + other
                            + " (shard ids are unique on the platform)");
                }
            }
            if (!shard.getCell().equals(c.getName())) {
                problems.add(sat + ".cell: \"" + shard.getCell() + "\", but the shard is listed in cell " + c.getName());
            }
            if (!regions.contains(shard.getRegion())) {
                problems.add(sat + ".region: \"" + shard.getRegion() + "\" is not a region of cell " + c.getName() + " "
                        + c.getRegionsList());
            }
            served.add(shard.getRegion());
            if (!Limits.isId(shard.getAddress(), TopologyStore.ADDRESS_LENGTH_MAX)) {
                problems.add(sat + ".address: \"" + shard.getAddress() + "\" is not host:port of 1.."
                        + TopologyStore.ADDRESS_LENGTH_MAX + " printable ASCII characters");
            }
        }
        for (String region : c.getRegionsList()) {
            if (!served.contains(region)) {
                problems.add(at + ".shards: region " + region + " of cell " + c.getName() + " has no shard");
            }
        }
    }

    private static boolean name(List<String> problems, String at, String value) {
        if (TopologyPaths.isName(value)) {
            return true;
        }
        problems.add(at + ": \"" + value + "\" is not a name of 1.." + TopologyPaths.NAME_LENGTH_MAX
                + " printable ASCII characters without '/'");
        return false;
    }

    private static void knownCell(List<String> problems, String at, String cell, Map<String, Cell> cells) {
        if (name(problems, at, cell) && !cells.containsKey(cell)) {
            problems.add(at + ": \"" + cell + "\" is not a cell of the document");
        }
    }
}
