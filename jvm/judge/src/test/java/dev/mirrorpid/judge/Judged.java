package dev.mirrorpid.judge;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.message.DescribeProducersResponseData.ProducerState;
import org.apache.kafka.common.record.internal.Record;

/** What the judge compares: records as consumers see them, and the oracle's verdict. */
final class Judged {
    /** The header every test producer writes: which source cluster a record was produced on. */
    static final String FROM = "from";

    private Judged() {}

    /**
     * One record as a consumer reads it: key, value and headers, as text, and the source cluster
     * its {@link #FROM} header names.
     */
    record Rec(String from, String key, String value, String headers) {

        /** A record a consumer read. */
        static Rec of(byte[] key, byte[] value, Headers headers) {
            return of(text(key), text(value), headers);
        }

        /** A record of a Kafka log. */
        static Rec of(Record r) {
            return of(r.hasKey() ? text(r.key()) : null, r.hasValue() ? text(r.value()) : null,
                    Arrays.asList(r.headers()));
        }

        private static Rec of(String key, String value, Iterable<Header> headers) {
            String from = "";
            StringBuilder h = new StringBuilder();
            for (Header header : headers) {
                if (header.key().equals(FROM)) {
                    from = text(header.value());
                }
                h.append(header.key()).append('=').append(text(header.value())).append(';');
            }
            return new Rec(from, key, value, h.toString());
        }

        @Override
        public String toString() {
            return key;
        }
    }

    private static String text(byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }

    private static String text(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return new String(out, StandardCharsets.UTF_8);
    }

    /** Each source cluster's read_committed records, by cluster name, in {@code sources}' order. */
    static Map<String, List<Rec>> readCommitted(List<SourceCluster> sources) {
        Map<String, List<Rec>> out = new LinkedHashMap<>();
        for (SourceCluster cl : sources) {
            out.put(cl.name(), cl.readCommitted());
        }
        return out;
    }

    /**
     * The oracle: the destination's read_committed records, split by source, must equal each
     * source's read_committed records, record for record and in order. Returns null when it
     * holds, else what differs.
     */
    static String oracle(Map<String, List<Rec>> sources, List<Rec> destination) {
        Map<String, List<Rec>> got = new LinkedHashMap<>();
        for (String s : sources.keySet()) {
            got.put(s, new ArrayList<>());
        }
        for (Rec r : destination) {
            got.computeIfAbsent(r.from(), k -> new ArrayList<>()).add(r);
        }
        List<String> faults = new ArrayList<>();
        for (Map.Entry<String, List<Rec>> e : got.entrySet()) {
            List<Rec> want = sources.getOrDefault(e.getKey(), List.of());
            List<Rec> have = e.getValue();
            if (want.equals(have)) {
                continue;
            }
            List<Rec> missing = minus(want, have);
            List<Rec> extra = minus(have, want);
            StringBuilder f = new StringBuilder(e.getKey()).append(':');
            if (!missing.isEmpty()) {
                f.append(" committed ").append(missing).append(" lost");
            }
            if (!extra.isEmpty()) {
                f.append(missing.isEmpty() ? "" : ",").append(" ").append(extra).append(" visible but ")
                        .append(want.containsAll(extra) ? "a second time" : "never committed");
            }
            if (missing.isEmpty() && extra.isEmpty()) {
                f.append(" records out of order");
            }
            faults.add(f.toString());
        }
        return faults.isEmpty() ? null : String.join("; ", faults);
    }

    /** {@code a} without one occurrence of each element of {@code b}. */
    private static List<Rec> minus(List<Rec> a, List<Rec> b) {
        Map<Rec, Integer> count = new HashMap<>();
        for (Rec r : b) {
            count.merge(r, 1, Integer::sum);
        }
        List<Rec> out = new ArrayList<>();
        for (Rec r : a) {
            Integer n = count.get(r);
            if (n != null && n > 0) {
                count.put(r, n - 1);
            } else {
                out.add(r);
            }
        }
        return out;
    }

    /**
     * A mirror's cycle check: carry only the batches produced in {@code region}, by their
     * records' {@link #FROM} header; a COMMIT or ABORT marker goes where its producer's last data
     * batch came from ({@code last}, by PID, which the check keeps).
     */
    static java.util.function.Predicate<org.apache.kafka.common.record.internal.RecordBatch> producedIn(String region,
            Map<Long, String> last) {
        return batch -> {
            if (batch.isControlBatch()) {
                return region.equals(last.get(batch.producerId()));
            }
            String from = provenance(batch);
            last.put(batch.producerId(), from);
            return region.equals(from);
        };
    }

    /** The cluster the first record of {@code batch} names in its {@link #FROM} header ("" if none). */
    static String provenance(org.apache.kafka.common.record.internal.RecordBatch batch) {
        for (Record r : batch) {
            for (Header h : r.headers()) {
                if (h.key().equals(FROM)) {
                    return new String(h.value(), StandardCharsets.UTF_8);
                }
            }
        }
        return "";
    }

    /** Kafka's producer entries, as the tables print them. */
    static String producers(List<ProducerState> states) {
        if (states.isEmpty()) {
            return "none";
        }
        List<String> out = new ArrayList<>();
        for (ProducerState s : states) {
            String txn = s.currentTxnStartOffset() >= 0 ? ", open txn" : "";
            out.add("PID " + s.producerId() + " epoch " + s.producerEpoch() + " seq " + s.lastSequence() + txn);
        }
        return String.join("; ", out);
    }
}
