// MCP content and A2A parts, both ways: a tool result becomes an artifact's parts (text, data for
// structuredContent, files for images, audio and resources), and an agent's parts become a tool
// result's content. Shared by switchboard as an agent and switchboard using remote agents.
import { randomUUID } from 'node:crypto';
import { Role, type Message, type Part } from '@a2a-js/sdk';

type Content = Record<string, unknown>;

function part(content: Part['content'], extra: { mediaType?: string; filename?: string } = {}): Part {
  return {
    content,
    metadata: undefined,
    filename: extra.filename ?? '',
    mediaType: extra.mediaType ?? '',
  };
}

export const textPart = (text: string): Part =>
  part({ $case: 'text', value: text }, { mediaType: 'text/plain' });
export const dataPart = (data: unknown): Part =>
  part({ $case: 'data', value: data }, { mediaType: 'application/json' });

/** A message from this side of the exchange (`agent` when switchboard answers, `user` when it asks). */
export function messageOf(
  role: 'agent' | 'user',
  parts: Part[],
  ids: { taskId?: string; contextId?: string } = {},
  metadata?: Record<string, unknown>,
): Message {
  return {
    messageId: randomUUID(),
    contextId: ids.contextId ?? '',
    taskId: ids.taskId ?? '',
    role: role === 'agent' ? Role.ROLE_AGENT : Role.ROLE_USER,
    parts,
    metadata,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** One MCP content block as an A2A part. */
function contentToPart(c: Content): Part {
  switch (c.type) {
    case 'text':
      return textPart(String(c.text ?? ''));
    case 'image':
    case 'audio':
      return part(
        { $case: 'raw', value: Buffer.from(String(c.data ?? ''), 'base64') },
        { mediaType: typeof c.mimeType === 'string' ? c.mimeType : 'application/octet-stream' },
      );
    case 'resource': {
      const r = (c.resource ?? {}) as Content;
      const mediaType = typeof r.mimeType === 'string' ? r.mimeType : '';
      const filename = typeof r.uri === 'string' ? r.uri : '';
      if (typeof r.blob === 'string')
        return part({ $case: 'raw', value: Buffer.from(r.blob, 'base64') }, { mediaType, filename });
      return part(
        { $case: 'text', value: String(r.text ?? '') },
        { mediaType: mediaType || 'text/plain', filename },
      );
    }
    case 'resource_link':
      return part(
        { $case: 'url', value: String(c.uri ?? '') },
        { mediaType: typeof c.mimeType === 'string' ? c.mimeType : '', filename: String(c.name ?? '') },
      );
    default:
      // A content type this side does not know travels as data, whole.
      return dataPart(c);
  }
}

/** A tool result's parts: its content blocks, then its structuredContent as one data part. */
export function resultToParts(result: Record<string, unknown>): Part[] {
  const content = Array.isArray(result.content) ? (result.content as Content[]) : [];
  const parts = content.map(contentToPart);
  if (result.structuredContent !== undefined) parts.push(dataPart(result.structuredContent));
  return parts;
}

/** A part as an MCP content block. */
function partToContent(p: Part): Content {
  const c = p.content;
  switch (c?.$case) {
    case 'text':
      return { type: 'text', text: c.value };
    case 'data':
      return { type: 'text', text: JSON.stringify(c.value) };
    case 'raw': {
      const data = Buffer.from(c.value).toString('base64');
      const mimeType = p.mediaType || 'application/octet-stream';
      if (mimeType.startsWith('image/')) return { type: 'image', data, mimeType };
      if (mimeType.startsWith('audio/')) return { type: 'audio', data, mimeType };
      return { type: 'resource', resource: { uri: fileUri(p), mimeType, blob: data } };
    }
    case 'url':
      return {
        type: 'resource_link',
        uri: c.value,
        name: p.filename || c.value,
        ...(p.mediaType ? { mimeType: p.mediaType } : {}),
      };
    default:
      return { type: 'text', text: '' };
  }
}

function fileUri(p: Part): string {
  return p.filename && /^[a-z][a-z0-9+.-]*:/i.test(p.filename)
    ? p.filename
    : `a2a:file/${p.filename || 'part'}`;
}

/**
 * An agent's parts as a tool result: every part as content, and the data of the one data part
 * that is an object as structuredContent too (what a host can read without parsing text).
 */
export function partsToResult(parts: Part[], isError = false): Record<string, unknown> {
  const content = parts.map(partToContent);
  const data = parts.filter((p) => p.content?.$case === 'data').map((p) => p.content!.value as unknown);
  const structured =
    data.length === 1 && typeof data[0] === 'object' && data[0] !== null && !Array.isArray(data[0])
      ? { structuredContent: data[0] }
      : {};
  return { content, ...structured, ...(isError ? { isError: true } : {}) };
}

/** The text of a message's text parts, joined. */
export function textOf(message: Message | undefined): string {
  return (message?.parts ?? [])
    .flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : []))
    .join('\n');
}

/** The data of a message's data parts. */
export function dataOf(message: Message | undefined): unknown[] {
  return (message?.parts ?? []).flatMap((p) =>
    p.content?.$case === 'data' ? [p.content.value as unknown] : [],
  );
}

/**
 * About what `parts` take as JSON on the wire: raw bytes counted as their base64, not as the
 * object JSON.stringify would make of a byte array (several times their size).
 */
export function partsBytes(parts: readonly Part[]): number {
  let raw = 0;
  const rest = JSON.stringify(parts, function (this: Record<string, unknown>, key, value: unknown) {
    // The value before any toJSON (a Buffer's would already be an object of its bytes).
    const original = this[key];
    if (!(original instanceof Uint8Array)) return value;
    raw += Math.ceil(original.byteLength / 3) * 4;
    return '';
  });
  return rest.length + raw;
}
