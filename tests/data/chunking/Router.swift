import Foundation

/// A route: an HTTP method and a path of constant and parameter components.
public struct Route: CustomStringConvertible {
    public let method: String
    public let path: [String]

    public var description: String {
        "\(method) /\(path.joined(separator: "/"))"
    }
}

/// Finds the responder for a request by walking a trie of path components.
public final class Router {
    private var children: [String: Router] = [:]
    private var responder: ((Request) -> Response)?

    public init() {}

    /// Registers `responder` for `route`, replacing any previous one.
    public func register(_ route: Route, responder: @escaping (Request) -> Response) {
        var node = self
        for component in [route.method] + route.path {
            if let next = node.children[component] {
                node = next
            } else {
                let next = Router()
                node.children[component] = next
                node = next
            }
        }
        node.responder = responder
    }

    /// Returns the responder for `method` and `path`, or nil.
    public func route(method: String, path: [String]) -> ((Request) -> Response)? {
        var node = self
        for component in [method] + path {
            guard let next = node.children[component] ?? node.children[":"] else { return nil }
            node = next
        }
        return node.responder
    }
}

extension Router {
    /// The number of registered routes.
    public var count: Int {
        (responder == nil ? 0 : 1) + children.values.reduce(0) { $0 + $1.count }
    }
}

public protocol Responder {
    func respond(to request: Request) -> Response
}
