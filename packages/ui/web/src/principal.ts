/**
 * Who the page is signed in as (`GET /whoami`) and what that lets it do, as bermd checks it: the page
 * offers only what the principal may do, and says which scope the rest needs.
 */
import { SCOPE, callScope, Principal as Scoped } from '@berm/protocol';

/** The protocol's principal, with the words a disabled control's title gives. */
export class Principal extends Scoped {
  mayRead(): boolean {
    return this.has(SCOPE.read);
  }

  /** Why a control needing `scope` is disabled, for its title; undefined when the principal holds it. */
  lacks(scope: string): string | undefined {
    return this.has(scope) ? undefined : `Needs the scope ${scope}, which ${this.name} does not hold`;
  }

  /** A control needing `scope`: disabled, with a title saying why, when the principal lacks it. */
  gate(scope: string): { disabled: boolean; title?: string } {
    const why = this.lacks(scope);
    return why === undefined ? { disabled: false } : { disabled: true, title: why };
  }

  /** Why calling `harness`'s tools is not offered; undefined when it may. */
  lacksCall(harness: string): string | undefined {
    return this.mayCall(harness) ? undefined : `Needs the scope ${SCOPE.call} or ${callScope(harness)}, which ${this.name} does not hold`;
  }
}
