import { CallHandler, ExecutionContext, Injectable, Logger, NestInterceptor } from '@nestjs/common';
import { from, mergeMap, Observable } from 'rxjs';

import { AdminRequest } from '../auth/admin-token.guard';
import { auditEntry } from './audit-entry';
import { AuditRepository } from './audit.repository';

/**
 * Records every change the admin API made (a request other than a read that its handler
 * answered without an error) in the audit log before the answer leaves, so a change a client
 * saw answered is in the log. Refused and failed requests changed nothing and leave no entry.
 */
@Injectable()
export class AuditInterceptor implements NestInterceptor {
  private readonly logger = new Logger(AuditInterceptor.name);

  constructor(private readonly audit: AuditRepository) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const request = context.switchToHttp().getRequest<AdminRequest>();
    return next.handle().pipe(mergeMap((answer) => from(this.record(request, answer))));
  }

  private async record(request: AdminRequest, answer: unknown): Promise<unknown> {
    const entry = auditEntry({
      method: request.method,
      url: request.url,
      route: request.routeOptions?.url,
      params: (request.params ?? {}) as Record<string, string>,
      token: request.adminToken,
      answer,
    });
    if (!entry) return answer;
    try {
      await this.audit.append(entry);
    } catch (error) {
      // The change is made and answered; the missing entry is logged (without any body).
      this.logger.error(
        `audit entry of ${entry.method} ${entry.path} by token "${entry.tokenName}" not stored: ${
          (error as Error).message
        }`,
      );
    }
    return answer;
  }
}
