package dev.mirrorpid;

/**
 * The module's exports this library calls ({@code docs/ABI.md}), in the order the native
 * runtime's shim lists them ({@code jvm/native/src/lib.rs}): an export crosses into native code
 * as its ordinal.
 */
enum Export {
    ABI_VERSION("mp_abi_version", 0),
    HASH_SEED("mp_hash_seed", 1),
    ALLOC("mp_alloc", 1),
    FREE("mp_free", 1),
    MAPPER_NEW("mp_mapper_new", 2),
    MAPPER_FREE("mp_mapper_free", 1),
    RESTORE("mp_restore", 2),
    REWRITE("mp_rewrite", 7),
    REWRITE_HEADERS("mp_rewrite_headers", 8),
    SOURCE("mp_source", 3),
    REWRITE_HEADERS_FROM("mp_rewrite_headers_from", 7),
    MAP("mp_map", 5),
    LOAD_RECORD("mp_load_record", 5),
    SNAPSHOT("mp_snapshot", 1),
    EXPIRE("mp_expire", 2),
    EXPIRE_PID("mp_expire_pid", 2),
    CONFIRM("mp_confirm", 1),
    ABORT("mp_abort", 1),
    PENDING("mp_pending", 1),
    MAPPER_LEN("mp_mapper_len", 1),
    OUTPUT_INFO("mp_output_info", 0),
    LAST_ERROR_PTR("mp_last_error_ptr", 0),
    LAST_ERROR_LEN("mp_last_error_len", 0);

    /** The export's name in the module. */
    final String wasmName;
    /** How many parameters it takes ({@code ExportsTest} checks them against the module). */
    final int params;

    Export(String wasmName, int params) {
        this.wasmName = wasmName;
        this.params = params;
    }
}
