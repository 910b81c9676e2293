package io.pmix.common.internal.wire;

import java.util.Arrays;
import java.util.List;

/**
 * Connect requests captured from OpenPMIx 4.2.2 connectors, with the record each must decode to.
 *
 * <p>The {@code doc-*} vectors are the captures printed in docs/transport.md §11 (uid 0x1234, gid
 * 0x5678). The {@code live-*} vectors were captured on this project's build host from the installed
 * 4.2.2 library (Debian, version string 4.2.2rc2) by a listener that read one request and closed:
 * the C client and tools ran under uid 0x1234/gid 0x5678 and were pointed at the listener by {@code
 * PMIX_SERVER_URI41} (client, flags 5 and 8), the {@code PMIX_SERVER_URI} attribute (flags 3, 4, 6
 * and 7, which is why their blobs carry {@code pmix.srvr.uri}) or a {@code pmix.sys.vm} file
 * (singleton). Every one ends with the 4.2.2 pad byte.
 */
final class RequestCaptures {
  private RequestCaptures() {}

  /** A capture and the record it stands for. */
  @SuppressWarnings("ArrayRecordComponent") // Test vectors, read through accessors, never compared.
  record Capture(String name, byte[] bytes, ConnectRequest request) {
    @Override
    public String toString() {
      return name;
    }
  }

  static final byte[] NATIVE_CREDENTIAL = Hex.bytes("34 12 00 00 78 56 00 00");
  static final int UID = 0x1234;
  static final int GID = 0x5678;

  private static ConnectRequest.Builder c422(ConnectorKind kind) {
    ConnectRequest.Builder b =
        ConnectRequest.builder()
            .security("native", NATIVE_CREDENTIAL)
            .kind(kind)
            .version("4.2.2rc2")
            .bfropsModule("v41")
            .bufferType(ConnectRequest.BUFFER_NON_DESC)
            .gdsModule("hash");
    if (kind.carriesIds()) {
      b.ids(UID, GID);
    }
    return b;
  }

  /** docs/transport.md §11.1: simple client, 67 bytes. */
  static final Capture DOC_CLIENT =
      new Capture(
          "doc-11.1-client",
          Hex.bytes(
              "ff ff ff ff  ff ff ff ff  33 00 00 00  00 00 00 00"
                  + "\"native\" 00  00 00 00 08  34 12 00 00 78 56 00 00  00"
                  + "\"testns\" 00  00 00 00 00  \"4.2.2rc2\" 00  \"v41\" 00  01  \"hash\" 00  00"),
          c422(ConnectorKind.SIMPLE_CLIENT).procId("testns", 0).padPresent(true).build());

  private static final String TOOL_BLOB_11_3 =
      "02 02 04"
          + " 14 \"pmix.ppid\" 00  00  05  0e c2 66"
          + " 1c \"pmix.cmd.line\" 00  00  03  0e \"./tool\" 00";

  /**
   * docs/transport.md §11.3: tool needing an id, 108 bytes. The blob is non-empty, so the pad stays
   * in it (see ConnectRequest.padPresent).
   */
  static final Capture DOC_TOOL_NEEDS_ID =
      new Capture(
          "doc-11.3-tool-needs-id",
          Hex.bytes(
              "ff ff ff ff ff ff ff ff 5c 00 00 00 00 00 00 00\"native\" 00  00 00 00 08 34 12 00"
                  + " 00 78 56 00 00  03  00 00 12 34 00 00 56 78\"4.2.2rc2\" 00 \"v41\" 00 01"
                  + " \"hash\" 00 "
                  + TOOL_BLOB_11_3
                  + " 00"),
          c422(ConnectorKind.TOOL_NEEDS_ID).infoBlob(Hex.bytes(TOOL_BLOB_11_3 + " 00")).build());

  // docs/transport.md elides this blob ("02 04 08 ..."); it is rebuilt from the four keys it names,
  // in the layout of the live flag-4 capture, with the pid bytes of 11.3. Its length (91 bytes) and
  // offsets match the capture's.
  private static final String TOOL_BLOB_11_4 =
      "02 04 08"
          + " 22 \"pmix.tool.nspace\" 00  00  03  0e \"mytool\" 00"
          + " 1e \"pmix.tool.rank\" 00  00  28  07"
          + " 14 \"pmix.ppid\" 00  00  05  0e c2 66"
          + " 1c \"pmix.cmd.line\" 00  00  03  0e \"./tool\" 00";

  /** docs/transport.md §11.4: tool given the id mytool:7, 166 bytes. */
  static final Capture DOC_TOOL_GIVEN_ID =
      new Capture(
          "doc-11.4-tool-given-id",
          Hex.bytes(
              "ff ff ff ff ff ff ff ff 96 00 00 00 00 00 00 00\"native\" 00  00 00 00 08  34 12 00"
                  + " 00 78 56 00 00  04  00 00 12 34 00 00 56 78\"mytool\" 00  00 00 00 07 "
                  + " \"4.2.2rc2\" 00 \"v41\" 00 01 \"hash\" 00 "
                  + TOOL_BLOB_11_4
                  + " 00"),
          c422(ConnectorKind.TOOL_GIVEN_ID)
              .procId("mytool", 7)
              .infoBlob(Hex.bytes(TOOL_BLOB_11_4 + " 00"))
              .build());

  /** docs/transport.md §11.7: a client with psec none, 57 bytes. */
  static final Capture DOC_NONE =
      new Capture(
          "doc-11.7-none",
          Hex.bytes(
              "ff ff ff ff ff ff ff ff 29 00 00 00 00 00 00 00"
                  + "\"none\" 00  00 00 00 00  00 \"testns\" 00 00 00 00 00"
                  + "\"4.2.2rc2\" 00 \"v41\" 00 01 \"hash\" 00 00"),
          c422(ConnectorKind.SIMPLE_CLIENT)
              .security("none", new byte[0])
              .procId("testns", 0)
              .padPresent(true)
              .build());

  /** Live: PMIx_Init with PMIX_NAMESPACE=testns, PMIX_RANK=0 (identical to 11.1). */
  static final Capture LIVE_CLIENT =
      new Capture(
          "live-flag0-client",
          Hex.bytes(
              "ffffffffffffffff33000000000000006e61746976650000000008341200007856000000746573746e73"
                  + "0000000000342e322e32726332007634310001686173680000"),
          c422(ConnectorKind.SIMPLE_CLIENT).procId("testns", 0).padPresent(true).build());

  private static Capture live(String name, ConnectorKind kind, String hex, int blobStart) {
    byte[] bytes = Hex.bytes(hex);
    byte[] blob = Arrays.copyOfRange(bytes, blobStart, bytes.length);
    return new Capture(name, bytes, c422(kind).infoBlob(blob).build());
  }

  private static Capture live(
      String name, ConnectorKind kind, String nspace, int rank, String hex, int blobStart) {
    byte[] bytes = Hex.bytes(hex);
    byte[] blob = Arrays.copyOfRange(bytes, blobStart, bytes.length);
    return new Capture(name, bytes, c422(kind).procId(nspace, rank).infoBlob(blob).build());
  }

  static final Capture LIVE_TOOL_NEEDS_ID =
      live(
          "live-flag3-tool-needs-id",
          ConnectorKind.TOOL_NEEDS_ID,
          "ffffffffffffffff96000000000000006e6174697665000000000834120000785600000300001234000056"
              + "78342e322e3272633200763431000168617368000203061c706d69782e737276722e75726900000350"
              + "706d69782d7365727665722e343234323b746370343a2f2f3132372e302e302e313a33393433350014"
              + "706d69782e707069640000050eac331c706d69782e636d642e6c696e650000030e2e2f746f6f6c0000",
          0x3f);

  static final Capture LIVE_TOOL_GIVEN_ID =
      live(
          "live-flag4-tool-given-id",
          ConnectorKind.TOOL_GIVEN_ID,
          "mytool",
          7,
          "ffffffffffffffffd0000000000000006e6174697665000000000834120000785600000400001234000056"
              + "786d79746f6f6c0000000007342e322e32726332007634310001686173680002050a1c706d69782e73"
              + "7276722e75726900000350706d69782d7365727665722e343234323b746370343a2f2f3132372e302e"
              + "302e313a33343335390022706d69782e746f6f6c2e6e73706163650000030e6d79746f6f6c001e706d"
              + "69782e746f6f6c2e72616e6b0000280714706d69782e707069640000050ef0331c706d69782e636d64"
              + "2e6c696e650000030e2e2f746f6f6c0000",
          0x4a);

  static final Capture LIVE_TOOL_CLIENT =
      live(
          "live-flag5-tool-client",
          ConnectorKind.TOOL_CLIENT,
          "testns",
          0,
          "ffffffffffffffff68000000000000006e6174697665000000000834120000785600000500001234000056"
              + "78746573746e730000000000342e322e32726332007634310001686173680002020414706d69782e70"
              + "7069640000050ed0341c706d69782e636d642e6c696e65000003102e2f746f6f6c350000",
          0x4a);

  static final Capture LIVE_LAUNCHER_NEEDS_ID =
      live(
          "live-flag6-launcher-needs-id",
          ConnectorKind.LAUNCHER_NEEDS_ID,
          "ffffffffffffffffc4000000000000006e6174697665000000000834120000785600000600001234000056"
              + "78342e322e32726332007634310001686173680002050a1c706d69782e737276722e75726900000350"
              + "706d69782d7365727665722e343234323b746370343a2f2f3132372e302e302e313a35393637330026"
              + "706d69782e746f6f6c2e6c61756e636865720000010114706d69782e707069640000050e863526706d"
              + "69782e746f6f6c2e6c61756e63686572000001011c706d69782e636d642e6c696e650000030e2e2f74"
              + "6f6f6c0000",
          0x3f);

  static final Capture LIVE_LAUNCHER_GIVEN_ID =
      live(
          "live-flag7-launcher-given-id",
          ConnectorKind.LAUNCHER_GIVEN_ID,
          "mylauncher",
          3,
          "ffffffffffffffff06010000000000006e6174697665000000000834120000785600000700001234000056"
              + "786d796c61756e636865720000000003342e322e32726332007634310001686173680002070e1c706d"
              + "69782e737276722e75726900000350706d69782d7365727665722e343234323b746370343a2f2f3132"
              + "372e302e302e313a35383335370022706d69782e746f6f6c2e6e7370616365000003166d796c61756e"
              + "63686572001e706d69782e746f6f6c2e72616e6b0000280326706d69782e746f6f6c2e6c61756e6368"
              + "65720000010114706d69782e707069640000050ebb3526706d69782e746f6f6c2e6c61756e63686572"
              + "000001011c706d69782e636d642e6c696e650000030e2e2f746f6f6c0000",
          0x4e);

  static final Capture LIVE_LAUNCHER_CLIENT =
      live(
          "live-flag8-launcher-client",
          ConnectorKind.LAUNCHER_CLIENT,
          "testns",
          0,
          "ffffffffffffffff96000000000000006e6174697665000000000834120000785600000800001234000056"
              + "78746573746e730000000000342e322e32726332007634310001686173680002040826706d69782e74"
              + "6f6f6c2e6c61756e636865720000010114706d69782e707069640000050ef13526706d69782e746f6f"
              + "6c2e6c61756e63686572000001011c706d69782e636d642e6c696e65000003102e2f746f6f6c350000",
          0x4a);

  static final Capture LIVE_SINGLETON =
      live(
          "live-flag9-singleton",
          ConnectorKind.SINGLETON_CLIENT,
          "singleton.vm.6998",
          0,
          "ffffffffffffffff74000000000000006e6174697665000000000834120000785600000900001234000056"
              + "7873696e676c65746f6e2e766d2e363939380000000000342e322e32726332007634310001686173"
              + "680002020414706d69782e707069640000050ed6361c706d69782e636d642e6c696e65000003122e2f"
              + "636c69656e740000",
          0x55);

  /** Every capture. */
  static final List<Capture> ALL =
      List.of(
          DOC_CLIENT,
          DOC_TOOL_NEEDS_ID,
          DOC_TOOL_GIVEN_ID,
          DOC_NONE,
          LIVE_CLIENT,
          LIVE_TOOL_NEEDS_ID,
          LIVE_TOOL_GIVEN_ID,
          LIVE_TOOL_CLIENT,
          LIVE_LAUNCHER_NEEDS_ID,
          LIVE_LAUNCHER_GIVEN_ID,
          LIVE_LAUNCHER_CLIENT,
          LIVE_SINGLETON);

  static List<Capture> all() {
    return ALL;
  }
}
