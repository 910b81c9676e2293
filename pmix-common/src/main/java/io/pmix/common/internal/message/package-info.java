/**
 * The message layer: one record per request a client or tool sends, per reply with a body and
 * per server push (the tag-0 event notification and the tag-2 forwarded output), each with
 * {@code encode(PmixWriter)} and a static {@code decode(PmixReader)}, so the two ends of every
 * command are one piece of code and cannot drift. Layouts are those of OpenPMIx 4.2.2 (docs/commands.md
 * §3 and §4; the bytes are pinned by golden vectors and by live comparisons with libpmix).
 *
 * <p>Conventions: a request's {@code encode} writes the whole body, its COMMAND unit first; its
 * {@code decode} reads what follows the COMMAND unit, which the receiver has read to dispatch
 * ({@link io.pmix.common.internal.message.Requests#decode} does both). Replies and pushes without
 * a COMMAND unit are read whole. Every {@code decode} trusts no count: a count (a {@code size_t},
 * read unsigned) beyond the reader's {@link io.pmix.common.codec.CodecLimits} is {@code
 * PMIX_ERR_BAD_PARAM}, malformed bytes are the codec's unpack statuses, and any other flaw (a value
 * of the wrong type where a field needs another) is {@code PMIX_ERR_UNPACK_FAILURE}; nothing but a
 * {@link io.pmix.common.PmixException} escapes. Records are immutable (lists copied in; byte
 * arrays copied in and out, but for {@link io.pmix.common.internal.message.GetNbReply}'s data
 * blobs, which the reply owns and nobody changes) and compare by content.
 *
 * <p>Internal API: used by pmix-client, pmix-tool and pmix-server through pmix-common, not by
 * applications; it may change without notice.
 */
@CheckReturnValue
package io.pmix.common.internal.message;

import com.google.errorprone.annotations.CheckReturnValue;
