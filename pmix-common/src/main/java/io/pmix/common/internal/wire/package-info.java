/**
 * The bytes of a PMIx connection as OpenPMIx 4.2.2 speaks them, below the payload codec: the
 * 16-byte message header and its Netty decoder and encoder, the tag rules, the command codes, and
 * the connect handshake (the request a client, tool, launcher or singleton sends first and the raw
 * reply fields the server answers with).
 *
 * <p>A connection has two framings, one after the other, exactly like Netty's HAProxy codec: the
 * connect request, whose length is in host byte order ({@link ConnectRequestDecoder}, which removes
 * itself after one request), then network-order frames ({@link FrameDecoder}). The reply fields of
 * the handshake carry no header at all ({@link ConnectReplyDecoder}).
 *
 * <p>Everything here decodes untrusted peer bytes: a length is checked against a limit before
 * anything is allocated, and malformed input becomes a {@link io.pmix.common.PmixException} whose
 * status says what was wrong. Decoders never close the channel; the handler that owns the
 * connection decides (a server closes, which is the only rejection every C connector understands).
 *
 * <p>Internal API: used by the server, client and tool modules of pmix-java, not by applications.
 * Wire documentation: docs/transport.md §5 to §8.
 */
@CheckReturnValue
package io.pmix.common.internal.wire;

import com.google.errorprone.annotations.CheckReturnValue;
