package dev.mirrorpid;

import org.apache.kafka.common.KafkaException;

/**
 * The module trapped (a WebAssembly fault: a bug of the module, which it is built and fuzzed
 * never to have) or the runtime failed under a call. The module instance it ran in can no longer
 * be trusted, so it is closed with every mapper placed in it, and each of their calls throws this,
 * naming the export that trapped: restore each from its last snapshot and replay {@code
 * __mirror_state}, as a new leader does ({@code MirrorLoop} does so itself). Mappers of the
 * other instances are untouched. Nothing of the caller's buffer was written.
 */
public class ModuleTrappedException extends KafkaException {
    private static final long serialVersionUID = 1L;

    /** The trap, naming the export that was running. */
    public ModuleTrappedException(String export, Throwable cause) {
        super("the mirrorpid module instance of this PidMapper trapped in " + export
                + "; it is closed, with every mapper in it", cause);
    }
}
