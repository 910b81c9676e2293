package io.pmix.common.internal.wire;

import static java.util.Objects.requireNonNull;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * The connect request: the first and only message a connector sends before the server's reply
 * (docs/transport.md §6.2). {@link ConnectRequestCodec} writes and reads it for both ends, so the
 * two cannot drift.
 *
 * <p>Unsigned 32-bit wire values (uids, gids, ranks) are held in {@code int}s with the same bits;
 * read them with {@link Integer#toUnsignedLong}. The conditional parts of the identity block are
 * present exactly when {@link #kind()} carries them, which the constructor enforces, so a decoded
 * request and an encoded one compare equal field by field.
 *
 * <p>Immutable: the byte arrays are copied in and out. The credential is secret-ish (a munge
 * credential can be replayed), so {@link #toString()} shows only its length.
 *
 * @param psecModule field #1, the security module that made the credential: {@code native}, {@code
 *     none} or {@code munge}
 * @param credential field #3, the credential bytes (field #2 is their length); see {@link
 *     NativeCredential} for {@code native}, empty for {@code none}
 * @param kind field #4, the connector's flag
 * @param euid the connector's effective uid from the identity block, present iff {@link
 *     ConnectorKind#carriesIds()}; written in network order, unlike the native credential
 * @param egid the connector's effective gid, present iff {@link ConnectorKind#carriesIds()}
 * @param nspace the connector's nspace, present iff {@link ConnectorKind#carriesProcId()}; at most
 *     255 UTF-8 bytes
 * @param rank the connector's rank, present iff {@link ConnectorKind#carriesProcId()}
 * @param version field #6, the connector's PMIx version string, e.g. {@code 4.2.2rc2}
 * @param bfropsModule field #7, the payload codec the connector speaks: {@code v41}, {@code v4},
 *     ...
 * @param bufferType field #8, 0 to 255: {@link #BUFFER_NON_DESC} or {@link #BUFFER_FULLY_DESC}
 * @param gdsModule field #9, the connector's data-store module, e.g. {@code hash}
 * @param infoBlob field #10, everything after the gds name except a lone 4.2.2 pad byte: normally a
 *     bfrops-packed {@code size_t} count followed by that many {@code pmix_info_t}, packed with
 *     {@link #bfropsModule} and {@link #bufferType}; kept as raw bytes for the payload codec. When
 *     a 4.2.2 connector sends a non-empty blob, its pad byte is the blob's last byte here (see
 *     {@link #padPresent})
 * @param padPresent whether the request ended in the single 0x00 that 4.0.0 to 4.2.2 connectors
 *     append (field #11) after an empty blob. After a non-empty blob the pad cannot be told from
 *     the blob's own last byte without decoding the blob, so it stays in {@link #infoBlob} and this
 *     is false; a blob reader must therefore tolerate one trailing byte. Java connectors send no
 *     pad
 */
@SuppressWarnings("ArrayRecordComponent") // The arrays are copied in and out, and equals,
// hashCode and toString are overridden to use their contents.
public record ConnectRequest(
    String psecModule,
    byte[] credential,
    ConnectorKind kind,
    OptionalInt euid,
    OptionalInt egid,
    Optional<String> nspace,
    OptionalInt rank,
    String version,
    String bfropsModule,
    int bufferType,
    String gdsModule,
    byte[] infoBlob,
    boolean padPresent) {

  /** Field #8 value: every packed item is preceded by its data type code. */
  public static final int BUFFER_FULLY_DESC = 2;

  /** Field #8 value: items carry no type codes, the default of release builds. */
  public static final int BUFFER_NON_DESC = 1;

  /** The version a Java connector announces; C servers accept it (docs/transport.md §9.4). */
  public static final String JAVA_CONNECTOR_VERSION = "4.2.2";

  /** Checks the invariants; every violation is a caller mistake, not a wire error. */
  public ConnectRequest {
    requireNonNull(psecModule, "psecModule");
    credential = requireNonNull(credential, "credential").clone();
    requireNonNull(kind, "kind");
    requireNonNull(euid, "euid");
    requireNonNull(egid, "egid");
    requireNonNull(nspace, "nspace");
    requireNonNull(rank, "rank");
    requireNonNull(version, "version");
    requireNonNull(bfropsModule, "bfropsModule");
    requireNonNull(gdsModule, "gdsModule");
    infoBlob = requireNonNull(infoBlob, "infoBlob").clone();

    WireIo.checkNoNul(psecModule, "psecModule");
    WireIo.checkNoNul(version, "version");
    WireIo.checkNoNul(bfropsModule, "bfropsModule");
    WireIo.checkNoNul(gdsModule, "gdsModule");
    if (euid.isPresent() != kind.carriesIds() || egid.isPresent() != kind.carriesIds()) {
      throw new IllegalArgumentException(
          kind + (kind.carriesIds() ? " needs" : " carries no") + " euid and egid");
    }
    if (nspace.isPresent() != kind.carriesProcId() || rank.isPresent() != kind.carriesProcId()) {
      throw new IllegalArgumentException(
          kind + (kind.carriesProcId() ? " needs" : " carries no") + " nspace and rank");
    }
    if (nspace.isPresent()) {
      WireIo.checkNspace(nspace.get(), WireIo.utf8Length(nspace.get()));
    }
    if (bufferType < 0 || bufferType > 0xFF) {
      throw new IllegalArgumentException("bufferType is one byte, got " + bufferType);
    }
    if (padPresent && infoBlob.length > 0) {
      // Encoding blob + pad would decode as a longer blob without pad: keep the record canonical.
      throw new IllegalArgumentException(
          "a pad byte after a non-empty info blob is indistinguishable from the blob; "
              + "include it in infoBlob instead");
    }
  }

  /** A builder with the defaults of a Java connector (see {@link Builder}). */
  public static Builder builder() {
    return new Builder();
  }

  /** A copy of the credential bytes. */
  @Override
  public byte[] credential() {
    return credential.clone();
  }

  /** A copy of the info blob bytes; empty when the connector sent none. */
  @Override
  public byte[] infoBlob() {
    return infoBlob.clone();
  }

  /** The credential's length, without copying it. */
  public int credentialLength() {
    return credential.length;
  }

  /** The info blob's length, without copying it. */
  public int infoBlobLength() {
    return infoBlob.length;
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    return o instanceof ConnectRequest r
        && psecModule.equals(r.psecModule)
        && Arrays.equals(credential, r.credential)
        && kind == r.kind
        && euid.equals(r.euid)
        && egid.equals(r.egid)
        && nspace.equals(r.nspace)
        && rank.equals(r.rank)
        && version.equals(r.version)
        && bfropsModule.equals(r.bfropsModule)
        && bufferType == r.bufferType
        && gdsModule.equals(r.gdsModule)
        && Arrays.equals(infoBlob, r.infoBlob)
        && padPresent == r.padPresent;
  }

  @Override
  public int hashCode() {
    return Objects.hash(
        psecModule,
        Arrays.hashCode(credential),
        kind,
        euid,
        egid,
        nspace,
        rank,
        version,
        bfropsModule,
        bufferType,
        gdsModule,
        Arrays.hashCode(infoBlob),
        padPresent);
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("ConnectRequest{").append(kind);
    euid.ifPresent(u -> sb.append(", euid=").append(Integer.toUnsignedString(u)));
    egid.ifPresent(g -> sb.append(", egid=").append(Integer.toUnsignedString(g)));
    nspace.ifPresent(ns -> sb.append(", nspace=").append(ns));
    rank.ifPresent(r -> sb.append(", rank=").append(Integer.toUnsignedString(r)));
    return sb.append(", psec=")
        .append(psecModule)
        .append(", credential=")
        .append(credential.length)
        .append(" bytes, version=")
        .append(version)
        .append(", bfrops=")
        .append(bfropsModule)
        .append(", bufferType=")
        .append(bufferType)
        .append(", gds=")
        .append(gdsModule)
        .append(", infoBlob=")
        .append(infoBlob.length)
        .append(" bytes, pad=")
        .append(padPresent)
        .append('}')
        .toString();
  }

  /**
   * Builds a {@link ConnectRequest}. Defaults are what a Java connector sends: version {@value
   * ConnectRequest#JAVA_CONNECTOR_VERSION}, bfrops {@code v41}, NON_DESC buffers, gds {@code hash},
   * empty credential and blob, no pad. The psec module and the kind have no default. Not
   * thread-safe; {@link #build()} may be called more than once.
   */
  public static final class Builder {
    private String psecModule;
    private byte[] credential = new byte[0];
    private ConnectorKind kind;
    private OptionalInt euid = OptionalInt.empty();
    private OptionalInt egid = OptionalInt.empty();
    private Optional<String> nspace = Optional.empty();
    private OptionalInt rank = OptionalInt.empty();
    private String version = JAVA_CONNECTOR_VERSION;
    private String bfropsModule = "v41";
    private int bufferType = BUFFER_NON_DESC;
    private String gdsModule = "hash";
    private byte[] infoBlob = new byte[0];
    private boolean padPresent;

    private Builder() {}

    /** Field #1 and #3: the security module and the credential it made (copied). */
    @CanIgnoreReturnValue
    public Builder security(String psecModule, byte[] credential) {
      this.psecModule = requireNonNull(psecModule, "psecModule");
      this.credential = requireNonNull(credential, "credential").clone();
      return this;
    }

    /** Field #4: the connector's kind. */
    @CanIgnoreReturnValue
    public Builder kind(ConnectorKind kind) {
      this.kind = requireNonNull(kind, "kind");
      return this;
    }

    /** The identity block's euid and egid (every kind except {@code SIMPLE_CLIENT}). */
    @CanIgnoreReturnValue
    public Builder ids(int euid, int egid) {
      this.euid = OptionalInt.of(euid);
      this.egid = OptionalInt.of(egid);
      return this;
    }

    /** The identity block's nspace and rank (kinds with {@link ConnectorKind#carriesProcId()}). */
    @CanIgnoreReturnValue
    public Builder procId(String nspace, int rank) {
      this.nspace = Optional.of(requireNonNull(nspace, "nspace"));
      this.rank = OptionalInt.of(rank);
      return this;
    }

    /** Field #6: the version string to announce. */
    @CanIgnoreReturnValue
    public Builder version(String version) {
      this.version = requireNonNull(version, "version");
      return this;
    }

    /** Field #7: the bfrops module name. */
    @CanIgnoreReturnValue
    public Builder bfropsModule(String bfropsModule) {
      this.bfropsModule = requireNonNull(bfropsModule, "bfropsModule");
      return this;
    }

    /** Field #8: the buffer type byte. */
    @CanIgnoreReturnValue
    public Builder bufferType(int bufferType) {
      this.bufferType = bufferType;
      return this;
    }

    /** Field #9: the gds module name. */
    @CanIgnoreReturnValue
    public Builder gdsModule(String gdsModule) {
      this.gdsModule = requireNonNull(gdsModule, "gdsModule");
      return this;
    }

    /** Field #10: the packed info blob (copied). */
    @CanIgnoreReturnValue
    public Builder infoBlob(byte[] infoBlob) {
      this.infoBlob = requireNonNull(infoBlob, "infoBlob").clone();
      return this;
    }

    /** Field #11: whether to append the 4.2.2 pad byte; only to reproduce a C connector. */
    @CanIgnoreReturnValue
    public Builder padPresent(boolean padPresent) {
      this.padPresent = padPresent;
      return this;
    }

    /**
     * The request.
     *
     * @throws NullPointerException if the psec module or the kind was not set
     * @throws IllegalArgumentException if the identity does not fit the kind, or a string field is
     *     unacceptable (see {@link ConnectRequest})
     */
    public ConnectRequest build() {
      return new ConnectRequest(
          requireNonNull(psecModule, "security(...) not set"),
          credential,
          requireNonNull(kind, "kind(...) not set"),
          euid,
          egid,
          nspace,
          rank,
          version,
          bfropsModule,
          bufferType,
          gdsModule,
          infoBlob,
          padPresent);
    }
  }
}
