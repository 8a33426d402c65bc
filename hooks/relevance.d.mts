/** Types of hooks/relevance.mjs (plain JavaScript, run by the plugin's SessionStart hook without a build). */
export declare const CONFIG: string;
export declare const PREVIOUS: string;
export declare const RECORD: string;
export interface RelevancePlan {
  state: 'on' | 'turn-on' | 'kept-off' | 'unreadable';
  line: string;
  text?: string;
}
export declare function planRelevance(project: string): RelevancePlan;
export declare function applyRelevance(project: string, plan: RelevancePlan, now?: Date): void;
