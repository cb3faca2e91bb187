extension RandomAccessCollection where Index == Int {
    /// In a collection sorted by `name`: where `target` is or would go, the first element not sorted before it.
    func sortedPosition(of target: String, by name: (Element) -> String) -> Int {
        var low = startIndex, high = endIndex
        while low < high {
            let middle = (low + high) / 2
            if name(self[middle]) < target { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
