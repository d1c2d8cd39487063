// The few parts of the untyped `smpp` package (0.5.x) that Herald and its tests use.
declare module 'smpp' {
  import type { EventEmitter } from 'node:events';
  import type { Server, Socket } from 'node:net';

  namespace smpp {
    /** A decoded PDU: header fields plus the command's parameters and TLVs by name. */
    interface PDU {
      command: string;
      command_status: number;
      sequence_number: number;
      [field: string]: unknown;
      isResponse(): boolean;
      response(options?: Record<string, unknown>): PDU;
    }
    type Callback = (pdu: PDU) => void;
    class Session extends EventEmitter {
      socket: Socket;
      send(pdu: PDU, responseCallback?: Callback): boolean;
      close(callback?: () => void): void;
      destroy(callback?: () => void): void;
      bind_transceiver(options: Record<string, unknown>, responseCallback?: Callback): boolean;
      submit_sm(options: Record<string, unknown>, responseCallback?: Callback): boolean;
      deliver_sm(options: Record<string, unknown>, responseCallback?: Callback): boolean;
      enquire_link(options?: Record<string, unknown>, responseCallback?: Callback): boolean;
      unbind(options?: Record<string, unknown>, responseCallback?: Callback): boolean;
    }
    interface ConnectOptions {
      url?: string;
      host?: string;
      port?: number;
      auto_enquire_link_period?: number;
      tls?: boolean;
    }
    function connect(options: ConnectOptions, listener?: () => void): Session;
    function createServer(options: Record<string, unknown>, listener?: (session: Session) => void): Server;
  }
  const smpp: {
    connect: typeof smpp.connect;
    createServer: typeof smpp.createServer;
    Session: typeof smpp.Session;
  };
  export = smpp;
}
