package dev.mirrorpid;

/** Which bindings write a {@code __mirror_state} record. */
public enum Durability {
    /** Every new binding (the default): a new leader maps every producer as the old one did. */
    BINDINGS("bindings"),
    /** Only salted bindings (collisions); the rest follow from F again. */
    COLLISIONS("collisions");

    private final String json;

    Durability(String json) {
        this.json = json;
    }

    String json() {
        return json;
    }
}
