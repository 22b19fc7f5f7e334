package dev.mirrorpid;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import org.apache.kafka.common.Uuid;

/**
 * The configuration of one destination partition's mapper: the module's config ({@code
 * docs/ABI.md}, "the config"), typed. The module checks every value when a mapper is made
 * ({@link MirrorPid#newMapper}); a bad one is a {@link MirrorPidException} naming it.
 */
public final class MapperConfig {
    private final Uuid topicId;
    private final int partition;
    private final Durability durability;
    private final OptionalLong producerExpirationMs;
    private final Map<String, List<String>> origins;
    private final OptionalLong maxBindings;
    private final OptionalLong maxClusters;
    private final OptionalLong maxClusterIdBytes;

    private MapperConfig(Builder b) {
        this.topicId = b.topicId;
        this.partition = b.partition;
        this.durability = b.durability;
        this.producerExpirationMs = b.producerExpirationMs;
        this.origins = b.origins == null ? null : copy(b.origins);
        this.maxBindings = b.maxBindings;
        this.maxClusters = b.maxClusters;
        this.maxClusterIdBytes = b.maxClusterIdBytes;
    }

    private static Map<String, List<String>> copy(Map<String, List<String>> origins) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        origins.forEach((source, list) -> out.put(
                Objects.requireNonNull(source, "origins source"), List.copyOf(list)));
        return java.util.Collections.unmodifiableMap(out);
    }

    /** A builder for the mapper of {@code topicId}'s partition {@code partition}. */
    public static Builder builder(Uuid topicId, int partition) {
        return new Builder(topicId, partition);
    }

    /** The destination topic. */
    public Uuid topicId() {
        return topicId;
    }

    /** The destination partition. */
    public int partition() {
        return partition;
    }

    /** Which bindings write a {@code __mirror_state} record. */
    public Durability durability() {
        return durability;
    }

    /** The config as the module's JSON. */
    String toJson() {
        StringBuilder j = new StringBuilder("{\"topicId\":");
        string(j, topicId.toString());
        j.append(",\"partition\":").append(partition);
        j.append(",\"durability\":");
        string(j, durability.json());
        producerExpirationMs.ifPresent(v -> j.append(",\"producerExpirationMs\":").append(v));
        if (origins != null) {
            j.append(",\"origins\":{");
            String sep = "";
            for (Map.Entry<String, List<String>> e : origins.entrySet()) {
                j.append(sep);
                sep = ",";
                string(j, e.getKey());
                j.append(":[");
                String sep2 = "";
                for (String o : e.getValue()) {
                    j.append(sep2);
                    sep2 = ",";
                    string(j, Objects.requireNonNull(o, "origin"));
                }
                j.append(']');
            }
            j.append('}');
        }
        maxBindings.ifPresent(v -> j.append(",\"maxBindings\":").append(v));
        maxClusters.ifPresent(v -> j.append(",\"maxClusters\":").append(v));
        maxClusterIdBytes.ifPresent(v -> j.append(",\"maxClusterIdBytes\":").append(v));
        return j.append('}').toString();
    }

    /** Appends {@code s} as a JSON string. */
    private static void string(StringBuilder j, String s) {
        j.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                j.append('\\').append(c);
            } else if (c < 0x20) {
                j.append(String.format("\\u%04x", (int) c));
            } else {
                j.append(c);
            }
        }
        j.append('"');
    }

    @Override
    public String toString() {
        return "MapperConfig" + toJson();
    }

    /** Builds a {@link MapperConfig}; every setting but the topic and partition is optional. */
    public static final class Builder {
        private final Uuid topicId;
        private final int partition;
        private Durability durability = Durability.BINDINGS;
        private OptionalLong producerExpirationMs = OptionalLong.empty();
        private Map<String, List<String>> origins;
        private OptionalLong maxBindings = OptionalLong.empty();
        private OptionalLong maxClusters = OptionalLong.empty();
        private OptionalLong maxClusterIdBytes = OptionalLong.empty();

        private Builder(Uuid topicId, int partition) {
            this.topicId = Objects.requireNonNull(topicId, "topicId");
            this.partition = partition;
        }

        /** Which bindings write a record (default {@link Durability#BINDINGS}). */
        public Builder durability(Durability durability) {
            this.durability = Objects.requireNonNull(durability, "durability");
            return this;
        }

        /** Idle time after which {@link PidMapper#expire} drops a binding (Kafka's {@code
         * producer.id.expiration.ms}; default one day). */
        public Builder producerExpirationMs(long ms) {
            this.producerExpirationMs = OptionalLong.of(ms);
            return this;
        }

        /**
         * The trust declaration: for each direct source cluster, the origin clusters whose
         * producers it may carry ({@code docs/DESIGN.md}, "Sources you do not control").
         */
        public Builder origins(Map<String, List<String>> origins) {
            this.origins = new LinkedHashMap<>(Objects.requireNonNull(origins, "origins"));
            return this;
        }

        /** Declares one source's origins (see {@link #origins}). */
        public Builder origin(String source, String... origins) {
            if (this.origins == null) {
                this.origins = new LinkedHashMap<>();
            }
            this.origins.put(source, new ArrayList<>(List.of(origins)));
            return this;
        }

        /** At most this many bindings (default 1,000,000). */
        public Builder maxBindings(long n) {
            this.maxBindings = OptionalLong.of(n);
            return this;
        }

        /** At most this many distinct source cluster IDs (default 10,000). */
        public Builder maxClusters(long n) {
            this.maxClusters = OptionalLong.of(n);
            return this;
        }

        /** At most this many bytes of source cluster IDs (default 1 MiB). */
        public Builder maxClusterIdBytes(long n) {
            this.maxClusterIdBytes = OptionalLong.of(n);
            return this;
        }

        /** The config. */
        public MapperConfig build() {
            return new MapperConfig(this);
        }
    }
}
