/**
 * The modality of a request, from the endpoint that served it (a request-log row's `endpoint`):
 * chat for every chat shape (chat, responses, messages, gemini, ollama), else what the route makes.
 */
export const MODALITY_BY_ENDPOINT: Readonly<Record<string, string>> = {
  embeddings: 'embedding',
  images: 'image',
  speech: 'speech',
  transcriptions: 'transcription',
  rerank: 'rerank',
  moderations: 'moderation',
  videos: 'video',
  music: 'music',
};

export function modalityOf(endpoint: string): string {
  return MODALITY_BY_ENDPOINT[endpoint] ?? 'chat';
}

/** The same mapping as an SQL expression over the request log's `endpoint` column. */
export const MODALITY_SQL = `CASE endpoint ${Object.entries(MODALITY_BY_ENDPOINT)
  .map(([e, m]) => `WHEN '${e}' THEN '${m}'`)
  .join(' ')} ELSE 'chat' END`;
