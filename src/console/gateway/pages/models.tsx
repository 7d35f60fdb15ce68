// Models: the catalog by provider and type, and the aliases.
import { Badge, Card, Loading, Table, useApi } from '../ui';

export function ModelsPage() {
  const catalog = useApi<any>('/api/models/catalog');
  const aliases = useApi<{ items: { alias: string; model: string; source: string }[] }>('/api/models/alias');
  const rows: any[] = [];
  for (const p of catalog.data?.providers ?? []) {
    for (const [type, list] of Object.entries(p.models ?? {}) as [string, any[]][]) {
      for (const m of list) rows.push({ ...m, type, provider: p.id, enabled: p.enabled });
    }
  }
  return (
    <>
      <Card title="Catalog">
        <Loading r={catalog} />
        {catalog.data && (
          <Table label="Models" head={['Model', 'Provider', 'Type', 'Input', 'Thinking']} empty="No models: providers list them in gateway.yaml or through the API.">
            {rows.map((m) => (
              <tr>
                <td><code>{m.id}</code></td>
                <td>{m.provider} {!m.enabled && <Badge tone="muted">disabled</Badge>}</td>
                <td>{m.type}</td>
                <td>{(m.capabilities?.modalities ?? []).join(', ')}</td>
                <td>{m.capabilities?.thinking ? 'yes' : ''}</td>
              </tr>
            ))}
          </Table>
        )}
      </Card>
      <Card title="Aliases">
        <Loading r={aliases} />
        {aliases.data && (
          <Table label="Aliases" head={['Alias', 'Model', 'Source']} empty="No aliases.">
            {aliases.data.items.map((a) => (
              <tr>
                <td><code>{a.alias}</code></td>
                <td>{a.model}</td>
                <td>{a.source}</td>
              </tr>
            ))}
          </Table>
        )}
      </Card>
    </>
  );
}
