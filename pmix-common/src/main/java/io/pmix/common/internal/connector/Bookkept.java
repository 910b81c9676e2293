package io.pmix.common.internal.connector;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a field of a {@link SessionPart} (or of a role's state) that holds per-cycle state, with
 * the bookkeeping entries that report it; a test checks that every such field is marked and that
 * its owner reports those entries, and the teardown contract that they are 0 after the last
 * finalize.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.FIELD)
public @interface Bookkept {
  /** The bookkeeping entries that report this field. */
  String[] value();
}
