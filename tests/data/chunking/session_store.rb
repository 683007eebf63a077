# frozen_string_literal: true

require "securerandom"
require "json"

module Example
  module Session
    # Raised when a session id has been tampered with.
    class InvalidId < StandardError; end

    # Keeps sessions in memory, keyed by a random id. Sessions expire after
    # +ttl+ seconds without use.
    class MemoryStore
      DEFAULT_TTL = 30 * 60

      attr_reader :ttl

      def initialize(ttl: DEFAULT_TTL, clock: -> { Time.now.to_f })
        @ttl = ttl
        @clock = clock
        @sessions = {}
      end

      # Returns the session data for +id+, or an empty hash when it is unknown
      # or has expired.
      def load(id)
        raise InvalidId, "bad session id: #{id.inspect}" unless valid_id?(id)

        entry = @sessions[id]
        return {} if entry.nil? || expired?(entry)

        entry[:touched] = @clock.call
        JSON.parse(entry[:data])
      end

      # Saves +data+ under +id+ (a new id when nil) and returns the id.
      def save(id, data)
        id ||= SecureRandom.hex(16)
        @sessions[id] = { data: JSON.generate(data), touched: @clock.call }
        id
      end

      def delete(id)
        @sessions.delete(id)
      end

      # Removes every expired session; returns how many were removed.
      def sweep
        before = @sessions.size
        @sessions.reject! { |_, entry| expired?(entry) }
        before - @sessions.size
      end

      private

      def expired?(entry)
        @clock.call - entry[:touched] > @ttl
      end

      def valid_id?(id)
        id.is_a?(String) && id.match?(/\A\h{32}\z/)
      end
    end
  end
end
