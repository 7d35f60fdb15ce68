import type { ComponentDefinition } from '../http/index.js';
import { coreComponent } from '../core/index.js';
import { alertmanagerComponent } from '../alertmanager/index.js';
import { gatewayComponent } from '../gateway/index.js';
import { pipelineComponent } from '../pipeline/index.js';
import { nodesComponent } from '../nodes/index.js';

/**
 * Every component the daemon runs. The Core API comes first: it owns `/core` and unknown hosts on the
 * control socket. The others are servers, each with its own TCP listener from daemon.yaml.
 */
export const COMPONENTS: ComponentDefinition[] = [coreComponent, alertmanagerComponent, gatewayComponent, pipelineComponent, nodesComponent];
