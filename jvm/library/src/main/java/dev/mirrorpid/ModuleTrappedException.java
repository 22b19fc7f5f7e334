package dev.mirrorpid;

import org.apache.kafka.common.KafkaException;

/**
 * The module trapped (a WebAssembly fault: a bug of the module, which it is built and fuzzed
 * never to have) or the runtime failed under a call. The mapper's state can no longer be
 * trusted, so the mapper closed itself: restore a new one from the last snapshot and replay
 * {@code __mirror_state}, as a new leader does. Nothing of the caller's buffer was written.
 */
public class ModuleTrappedException extends KafkaException {
    private static final long serialVersionUID = 1L;

    /** The trap, naming the export that was running. */
    public ModuleTrappedException(String export, Throwable cause) {
        super("the mirrorpid module trapped in " + export + "; this PidMapper is closed", cause);
    }
}
