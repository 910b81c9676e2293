/**
 * Where job-level and modex data live (libpmix's "gds" framework): the seam a connector reads its
 * data through ({@link io.pmix.common.internal.gds.GdsModule}), libpmix's rules for choosing a
 * module ({@link io.pmix.common.internal.gds.GdsSelection}), and readers of the shared-memory
 * stores "ds12" and "ds21" that libpmix 4.2.2 servers write ({@link
 * io.pmix.common.internal.gds.DstoreReader}). The facts behind them are in the repository's {@code
 * docs/gds.md}.
 *
 * <p>Internal API: used by pmix-client and pmix-tool, not by applications; it may change without
 * notice.
 */
@CheckReturnValue
package io.pmix.common.internal.gds;

import com.google.errorprone.annotations.CheckReturnValue;
