import * as path from 'node:path';
import { readFileSync } from 'node:fs';
import { MissingPeerDependencyError } from '../errors/missing-peer-dependency.error';
import { OPTIONAL_PEERS, requirePeer, tryRequirePeer } from './optional-peer';

const manifest = JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
};

/** Makes `require(name)` fail the way it does when the package is not installed. */
function uninstall(name: string): void {
  jest.doMock(name, () => {
    throw Object.assign(new Error(`Cannot find module '${name}' from 'optional-peer.ts'`), {
      code: 'MODULE_NOT_FOUND',
    });
  });
}

describe('optional-peer', () => {
  afterEach(() => jest.resetModules());

  describe('OPTIONAL_PEERS', () => {
    it('lists exactly the optional peerDependencies of package.json, with their ranges', () => {
      const optional = Object.keys(manifest.peerDependenciesMeta).filter(
        (name) => manifest.peerDependenciesMeta[name].optional,
      );
      expect(Object.keys(OPTIONAL_PEERS).sort()).toEqual(optional.sort());
      for (const [name, { range }] of Object.entries(OPTIONAL_PEERS)) {
        expect(`${name}@${manifest.peerDependencies[name]}`).toBe(`${name}@${range}`);
      }
    });
  });

  describe(requirePeer.name, () => {
    it('loads an installed peer', () => {
      expect(requirePeer<{ Kafka: unknown }>('kafkajs').Kafka).toBeDefined();
    });

    // claim: C-5
    it('names the package, the feature and the install command when the peer is missing', () => {
      uninstall('amqplib');
      const error = (() => {
        try {
          requirePeer('amqplib');
        } catch (e) {
          return e as MissingPeerDependencyError;
        }
      })();
      expect(error).toBeInstanceOf(MissingPeerDependencyError);
      expect(error).toMatchObject({ packageName: 'amqplib', installCommand: 'npm i amqplib@^2.0.0' });
      expect(error?.message).toBe(
        "The RabbitMQ transport needs the package 'amqplib', which is not installed in this application. " +
          'Install it: npm i amqplib@^2.0.0',
      );
    });

    it('asks for the Nest package of the application’s own major', () => {
      uninstall('@nestjs/microservices');
      const major = (
        JSON.parse(readFileSync(require.resolve('@nestjs/core/package.json'), 'utf8')) as {
          version: string;
        }
      ).version.split('.')[0];
      expect(() => requirePeer('@nestjs/microservices')).toThrow(
        `Install it: npm i @nestjs/microservices@^${major}`,
      );
    });
  });

  describe(tryRequirePeer.name, () => {
    it('answers undefined for a missing peer', () => {
      uninstall('prom-client');
      expect(tryRequirePeer('prom-client')).toBeUndefined();
    });

    it('throws when the peer is installed but fails to load', () => {
      jest.doMock('prom-client', () => {
        throw new TypeError('broken install');
      });
      expect(() => tryRequirePeer('prom-client')).toThrow('broken install');
    });
  });
});
