package example.data

import scala.util.control.NonFatal

/** A value, or the errors found while making it. */
sealed abstract class Validated[+E, +A] extends Product with Serializable {

  def fold[B](invalid: E => B, valid: A => B): B = this match {
    case Validated.Invalid(e) => invalid(e)
    case Validated.Valid(a)   => valid(a)
  }

  def isValid: Boolean = fold(_ => false, _ => true)

  def map[B](f: A => B): Validated[E, B] = this match {
    case i @ Validated.Invalid(_) => i
    case Validated.Valid(a)       => Validated.Valid(f(a))
  }
}

object Validated {
  final case class Valid[+A](a: A) extends Validated[Nothing, A]
  final case class Invalid[+E](e: E) extends Validated[E, Nothing]

  /** Runs `f`, catching non-fatal exceptions as the invalid side. */
  def catchNonFatal[A](f: => A): Validated[Throwable, A] =
    try Valid(f)
    catch { case NonFatal(t) => Invalid(t) }
}

trait ValidatedSyntax {
  implicit final class ValidatedIdOps[A](private val a: A) {
    def valid[E]: Validated[E, A] = Validated.Valid(a)
    def invalid[B]: Validated[A, B] = Validated.Invalid(a)
  }
}
