/** When each step of the outage scenario happened (epoch ms, this machine's clock). */
export interface OutageMoments {
  /** The stop command was issued. */
  readonly stopIssuedAt: number;
  /** The stop command returned (the broker is down). */
  readonly stoppedAt: number;
  /** The start command was issued. */
  readonly startIssuedAt: number;
  /** The start command returned (the broker serves again). */
  readonly servingAt: number;
  /** The last notification of the burst was stored (subscribe-service's clock, the same machine). */
  readonly lastNotifiedAt: number;
}

/** The outage scenario's figures for the summary. */
export interface OutageTimings {
  readonly stopMs: number;
  readonly startMs: number;
  /**
   * Broker restart → full delivery, from the start command: a consumer may well have everything before the
   * command returns (RabbitMQ's `start_app` waits for the whole node), so timing it from the return could
   * come out negative. 0 when everything was delivered before the start command: on a cluster
   * (`--cluster`) the other nodes serve while one is down.
   */
  readonly toFullDeliveryMs: number;
}

/** The figures of the outage scenario, each from the command that began it. */
export function outageTimings(moments: OutageMoments): OutageTimings {
  return {
    stopMs: moments.stoppedAt - moments.stopIssuedAt,
    startMs: moments.servingAt - moments.startIssuedAt,
    toFullDeliveryMs: Math.max(0, moments.lastNotifiedAt - moments.startIssuedAt),
  };
}
