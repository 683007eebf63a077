{-# LANGUAGE BangPatterns #-}
-- | A purely functional FIFO queue made of two lists.
module Data.Queue
  ( Queue
  , empty
  , push
  , pop
  , fromList
  ) where

import Data.List (foldl')

-- | A queue: elements are pushed onto the back list and popped from the front one.
data Queue a = Queue ![a] ![a]
  deriving (Eq)

instance Show a => Show (Queue a) where
  show q = "fromList " ++ show (toList q)

-- | The empty queue.
empty :: Queue a
empty = Queue [] []

-- | Adds an element at the back.
push :: a -> Queue a -> Queue a
push x (Queue front back) = Queue front (x : back)

-- | Removes the element at the front, reversing the back list when the front
-- one runs out (amortised constant time).
pop :: Queue a -> Maybe (a, Queue a)
pop (Queue [] []) = Nothing
pop (Queue [] back) = pop (Queue (reverse back) [])
pop (Queue (x : front) back) = Just (x, Queue front back)

fromList :: [a] -> Queue a
fromList = foldl' (flip push) empty

toList :: Queue a -> [a]
toList (Queue front back) = front ++ reverse back
