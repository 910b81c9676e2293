/**
 * pmix-tool: {@link io.pmix.tool.PMIxTool}, what debuggers, monitoring tools and launchers call to
 * attach to a PMIx server (OpenPMIx 4.2.2 or pmix-java), query it, receive its events and forwarded
 * output, and start or control jobs through it. Events are pmix-common's {@link
 * io.pmix.common.Event}; forwarded output arrives as {@link io.pmix.tool.IofOutput} at an {@link
 * io.pmix.tool.IofHandler}.
 *
 * <p>The tool shares its connection machinery with the client through pmix-common and depends on
 * neither pmix-client nor pmix-server. A launcher that must also serve the processes it starts
 * embeds {@code io.pmix.server.PMIxServer} alongside (see {@link io.pmix.tool.PMIxTool}).
 */
@CheckReturnValue
package io.pmix.tool;

import com.google.errorprone.annotations.CheckReturnValue;
